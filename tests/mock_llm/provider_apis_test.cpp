// mock-llm's Responses API and Gemini API (issue 46) without sockets: the shapes the services
// publish (typed stream events with sequence numbers; candidates, finishReason, usageMetadata),
// their tool-call pairing checks and their error JSON.
#include <gtest/gtest.h>

#include <mock_llm/engine.hpp>

#include "mock_llm/load_script.hpp"

namespace loopr::mock_llm {
namespace {

const char* kScript = R"Y(
defaults:
  usage: {input_tokens: 40, output_tokens: 9, cache_read_input_tokens: 60}
rules:
  - name: call
    match: {first_user: "^build it$", turn: 1}
    reply:
      text: "Running the build."
      tool_use: {name: run_shell_command, input: {command: make}}
  - name: after
    match: {first_user: "^build it$", turn: 2, tool_result: "built"}
    reply: {text: "It builds."}
  - name: busy
    match: {first_user: "^busy$"}
    reply: {fault: {status: 429, retry_after: "3"}}
)Y";

HttpRequest post(const std::string& target, const Json& body,
                 std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest r;
  r.method = "POST";
  r.target = target;
  headers.emplace_back("content-type", "application/json");
  headers.emplace_back("x-loopr-loop-id", "001");
  headers.emplace_back("x-loopr-loop-type", "code");
  r.headers.items = std::move(headers);
  r.body = body.dump();
  return r;
}

HttpRequest gemini(const Json& contents, bool stream = false) {
  std::string target = std::string("/v1beta/models/gemini-9-pro:") +
                       (stream ? "streamGenerateContent?alt=sse" : "generateContent");
  return post(target, {{"contents", contents}}, {{"x-goog-api-key", "AIza-test"}});
}

HttpRequest responses(const Json& input, bool stream = false) {
  return post("/v1/responses", {{"model", "gpt-9"}, {"input", input}, {"stream", stream}},
              {{"authorization", "Bearer sk-x"}});
}

Json user_text(const std::string& text) {
  return {{"role", "user"}, {"parts", Json::array({{{"text", text}}})}};
}

/// The JSON of each `data:` line of a stream.
std::vector<Json> data_of(const ResponsePlan& plan) {
  std::vector<Json> out;
  for (const auto& e : plan.events) {
    auto at = e.find("data: ");
    auto end = e.find_first_of("\r\n", at);
    out.push_back(Json::parse(e.substr(at + 6, end - at - 6)));
  }
  return out;
}

}  // namespace

TEST(GeminiApiTest, FunctionCallRoundTripWithUsageMetadata) {
  Engine engine(load(kScript), {});
  ResponsePlan first = engine.handle(gemini(Json::array({user_text("build it")})));
  ASSERT_EQ(first.status, 200) << first.body;
  Json j = Json::parse(first.body);
  const Json& cand = j["candidates"][0];
  EXPECT_EQ(cand["finishReason"], "STOP");
  EXPECT_EQ(cand["content"]["role"], "model");
  EXPECT_EQ(cand["content"]["parts"][0]["text"], "Running the build.");
  const Json& call = cand["content"]["parts"][1]["functionCall"];
  EXPECT_EQ(call["name"], "run_shell_command");
  EXPECT_EQ(call["args"], Json({{"command", "make"}}));
  EXPECT_EQ(j["usageMetadata"]["promptTokenCount"], 100);
  EXPECT_EQ(j["usageMetadata"]["cachedContentTokenCount"], 60);
  EXPECT_EQ(j["usageMetadata"]["candidatesTokenCount"], 9);

  Json contents =
      Json::array({user_text("build it"),
                   cand["content"],
                   {{"role", "user"},
                    {"parts", Json::array({{{"functionResponse",
                                             {{"id", call["id"]},
                                              {"name", "run_shell_command"},
                                              {"response", {{"output", "built"}}}}}}})}}});
  ResponsePlan second = engine.handle(gemini(contents, true));
  ASSERT_EQ(second.status, 200) << second.body;
  ASSERT_TRUE(second.streaming);
  auto chunks = data_of(second);
  ASSERT_FALSE(chunks.empty());
  std::string text;
  for (const auto& c : chunks)
    for (const auto& p : c["candidates"][0]["content"]["parts"]) text += p.value("text", "");
  EXPECT_EQ(text, "It builds.");
  EXPECT_EQ(chunks.back()["candidates"][0]["finishReason"], "STOP");
  EXPECT_TRUE(chunks.back().contains("usageMetadata"));
  EXPECT_FALSE(chunks.front().contains("usageMetadata"));
}

TEST(GeminiApiTest, UnansweredCallsMissingKeysAndRateLimitsInGooglesWords) {
  Engine engine(load(kScript), {});
  ResponsePlan first = engine.handle(gemini(Json::array({user_text("build it")})));
  Json model = Json::parse(first.body)["candidates"][0]["content"];
  ResponsePlan unanswered =
      engine.handle(gemini(Json::array({user_text("build it"), model, user_text("and?")})));
  EXPECT_EQ(unanswered.status, 400);
  EXPECT_EQ(Json::parse(unanswered.body)["error"]["status"], "INVALID_ARGUMENT");
  EXPECT_NE(unanswered.body.find("function response parts"), std::string::npos);

  HttpRequest no_key = gemini(Json::array({user_text("build it")}));
  no_key.headers.items.erase(no_key.headers.items.begin());
  EXPECT_EQ(engine.handle(no_key).status, 403);

  ResponsePlan busy = engine.handle(gemini(Json::array({user_text("busy")})));
  EXPECT_EQ(busy.status, 429);
  Json err = Json::parse(busy.body)["error"];
  EXPECT_EQ(err["status"], "RESOURCE_EXHAUSTED");
  EXPECT_EQ(err["details"][0]["retryDelay"], "3s");
}

TEST(ResponsesApiTest, StreamEventsAreTypedNumberedAndEndWithCompleted) {
  Engine engine(load(kScript), {});
  Json input =
      Json::array({{{"role", "user"},
                    {"content", Json::array({{{"type", "input_text"}, {"text", "build it"}}})}}});
  ResponsePlan plan = engine.handle(responses(input, true));
  ASSERT_EQ(plan.status, 200) << plan.body;
  auto events = data_of(plan);
  ASSERT_GE(events.size(), 6u);
  EXPECT_EQ(events.front()["type"], "response.created");
  EXPECT_EQ(events.back()["type"], "response.completed");
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i]["sequence_number"], i);
  const Json& response = events.back()["response"];
  EXPECT_EQ(response["status"], "completed");
  EXPECT_EQ(response["usage"]["input_tokens"], 100);
  EXPECT_EQ(response["usage"]["input_tokens_details"]["cached_tokens"], 60);
  const Json& call = response["output"][1];
  EXPECT_EQ(call["type"], "function_call");
  EXPECT_EQ(call["name"], "run_shell_command");
  EXPECT_EQ(call["arguments"], "{\"command\":\"make\"}");
  std::string args;
  for (const auto& e : events)
    if (e["type"] == "response.function_call_arguments.delta")
      args += e["delta"].get<std::string>();
  EXPECT_EQ(args, call["arguments"].get<std::string>());

  // The answer: the call sent back by call_id, then its output.
  Json next = input;
  next.push_back({{"type", "function_call"},
                  {"call_id", call["call_id"]},
                  {"name", "run_shell_command"},
                  {"arguments", call["arguments"]}});
  next.push_back(
      {{"type", "function_call_output"}, {"call_id", call["call_id"]}, {"output", "built"}});
  ResponsePlan second = engine.handle(responses(next));
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(Json::parse(second.body)["output"][0]["content"][0]["text"], "It builds.");
}

TEST(ResponsesApiTest, AnOutputWithoutItsCallIsRefused) {
  Engine engine(load(kScript), {});
  Json input =
      Json::array({{{"role", "user"}, {"content", "build it"}},
                   {{"type", "function_call_output"}, {"call_id", "call_x"}, {"output", "built"}}});
  ResponsePlan plan = engine.handle(responses(input));
  EXPECT_EQ(plan.status, 400);
  EXPECT_NE(plan.body.find("No tool call found for function call output with call_id call_x"),
            std::string::npos)
      << plan.body;
  EXPECT_EQ(Json::parse(plan.body)["error"]["type"], "invalid_request_error");
}

}  // namespace loopr::mock_llm
