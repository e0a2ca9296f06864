#include <gtest/gtest.h>

#include <string>

#include "llm/wire.hpp"

using namespace loopr::llm;
using nlohmann::json;

namespace {

WireSettings settings(std::string max_field = "max_completion_tokens") {
  WireSettings s;
  s.model = "gpt-9";
  s.max_tokens = 4096;
  s.api_key = "sk-openai";
  s.key_env = "OPENAI_API_KEY";
  s.max_tokens_field = std::move(max_field);
  return s;
}

std::string header(const HttpRequest& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "<absent>";
}

/// Feeds `data:` chunks as an OpenAI server streams them.
struct Streamed {
  std::optional<LlmError> error;
  bool complete = false;
  Response response;
};

Streamed stream(const std::vector<std::string>& chunks, bool done = true) {
  auto wire = make_openai_wire(settings());
  auto st = wire->start_stream();
  Streamed out;
  std::string text;
  for (const auto& c : chunks) text += "data: " + c + "\n\n";
  if (done) text += "data: [DONE]\n\n";
  SseParser parser([&](const SseEvent& e) {
    if (!out.error && !st->complete()) out.error = st->on_event(e);
  });
  for (std::size_t i = 0; i < text.size(); i += 11)
    parser.feed(std::string_view(text).substr(i, 11));
  out.complete = st->complete();
  if (out.complete && !out.error) out.response = st->take_response();
  return out;
}

std::string chunk(const json& delta, const json& finish = nullptr) {
  return json{{"id", "chatcmpl-1"},
              {"object", "chat.completion.chunk"},
              {"model", "gpt-9"},
              {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}},
              {"usage", nullptr}}
      .dump();
}

}  // namespace

TEST(OpenAiWireTest, RequestMapsToolsMessagesAndMaxTokensField) {
  Request r;
  r.system = "sys";
  r.loop_id = "code-001-001-001";
  r.loop_type = "code";
  r.tools = {{"run_command", "Runs", json{{"type", "object"}}}};
  r.messages = {Message::user_text("build it")};
  Message assistant{
      Role::assistant,
      {ContentBlock::make_text("Running."),
       ContentBlock::make_tool_use("call_1", "run_command", json{{"command", "make"}})}};
  r.messages.push_back(assistant);
  r.messages.push_back(Message{Role::user,
                               {ContentBlock::make_tool_result("call_1", "ok"),
                                ContentBlock::make_tool_result("call_2", "boom", true)}});

  auto wire = make_openai_wire(settings());
  auto b = wire->build(r, true);
  ASSERT_TRUE(std::holds_alternative<HttpRequest>(b));
  const HttpRequest& http = std::get<HttpRequest>(b);
  EXPECT_EQ(http.target, "/v1/chat/completions");
  EXPECT_EQ(header(http, "authorization"), "Bearer sk-openai");
  EXPECT_EQ(header(http, "x-loopr-loop-id"), "code-001-001-001");
  EXPECT_EQ(header(http, "x-loopr-loop-type"), "code");
  json body = json::parse(http.body);
  EXPECT_EQ(body["max_completion_tokens"], 4096);
  EXPECT_FALSE(body.contains("max_tokens"));
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  EXPECT_EQ(body["tool_choice"], "auto");
  EXPECT_EQ(body["tools"][0], json::parse(R"({"type":"function","function":{"name":"run_command",
      "description":"Runs","parameters":{"type":"object"}}})"));
  EXPECT_EQ(body["messages"], json::parse(R"([
    {"role":"system","content":"sys"},
    {"role":"user","content":"build it"},
    {"role":"assistant","content":"Running.","tool_calls":[{"id":"call_1","type":"function",
      "function":{"name":"run_command","arguments":"{\"command\":\"make\"}"}}]},
    {"role":"tool","tool_call_id":"call_1","content":"ok"},
    {"role":"tool","tool_call_id":"call_2","content":"ERROR: boom"}])"));

  auto local = make_openai_wire(settings("max_tokens"));
  json lb = json::parse(std::get<HttpRequest>(local->build(r, false)).body);
  EXPECT_EQ(lb["max_tokens"], 4096);
  EXPECT_FALSE(lb.contains("max_completion_tokens"));
  EXPECT_FALSE(lb.contains("stream"));
  EXPECT_FALSE(lb.contains("stream_options"));

  auto keyless = settings();
  keyless.api_key.clear();  // a local server without a key
  EXPECT_EQ(
      header(std::get<HttpRequest>(make_openai_wire(keyless)->build(r, false)), "authorization"),
      "<absent>");
}

TEST(OpenAiWireTest, ParsesToolCallsUsageAndEchoesArgumentsVerbatim) {
  auto wire = make_openai_wire(settings());
  auto p = wire->parse_response(R"({"id":"chatcmpl-9","model":"gpt-9-2026","choices":[{"index":0,
    "message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[
      {"id":"call_a","type":"function","function":{"name":"read_file","arguments":"{ \"path\" : \"x\" }"}},
      {"id":"call_b","type":"function","function":{"name":"list_dir","arguments":"not json"}}]},
    "finish_reason":"tool_calls"}],
    "usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,
      "prompt_tokens_details":{"cached_tokens":60},"completion_tokens_details":{"reasoning_tokens":5}}})");
  ASSERT_TRUE(std::holds_alternative<Response>(p));
  const Response& r = std::get<Response>(p);
  EXPECT_EQ(r.stop_reason, StopReason::tool_use);
  ASSERT_EQ(r.tool_uses().size(), 2u);
  EXPECT_EQ(r.tool_uses()[0]->input, json({{"path", "x"}}));
  EXPECT_EQ(r.tool_uses()[1]->input, json("not json"));  // handed on for the tool to refuse
  EXPECT_EQ(r.usage.input_tokens, 40);
  EXPECT_EQ(r.usage.cache_read_tokens, 60);
  EXPECT_EQ(r.usage.output_tokens, 20);
  EXPECT_EQ(r.model, "gpt-9-2026");

  Request next;
  next.messages = {Message::user_text("go"), r.to_message(),
                   Message{Role::user, {ContentBlock::make_tool_result("call_a", "data")}}};
  json sent = json::parse(std::get<HttpRequest>(wire->build(next, false)).body)["messages"];
  EXPECT_EQ(sent[1]["tool_calls"][0]["function"]["arguments"], "{ \"path\" : \"x\" }");
  EXPECT_TRUE(sent[1]["content"].is_null());
}

TEST(OpenAiWireTest, FinishReasonMapping) {
  auto wire = make_openai_wire(settings());
  auto reason = [&](const std::string& finish, const std::string& extra = "") {
    auto p = wire->parse_response(R"({"choices":[{"message":{"content":"x")" + extra +
                                  R"(},"finish_reason":")" + finish + "\"}]}");
    return std::get<Response>(p).stop_reason;
  };
  EXPECT_EQ(reason("stop"), StopReason::end_turn);
  EXPECT_EQ(reason("length"), StopReason::max_tokens);
  EXPECT_EQ(reason("tool_calls"), StopReason::tool_use);
  EXPECT_EQ(reason("function_call"), StopReason::tool_use);
  EXPECT_EQ(reason("content_filter"), StopReason::refusal);
  EXPECT_EQ(reason("stop", R"(,"refusal":"I can't help with that")"), StopReason::refusal);
  // Some local servers say "stop" while asking for tools.
  EXPECT_EQ(
      reason("stop", R"(,"tool_calls":[{"id":"c","function":{"name":"n","arguments":"{}"}}])"),
      StopReason::tool_use);
}

TEST(OpenAiWireTest, StreamAssemblesToolCallFragmentsByIndex) {
  auto s = stream({
      chunk({{"role", "assistant"}, {"content", "Let me "}}),
      chunk({{"content", "check."}}),
      chunk({{"tool_calls",
              {{{"index", 0},
                {"id", "call_1"},
                {"type", "function"},
                {"function", {{"name", "read_file"}, {"arguments", ""}}}}}}}),
      chunk({{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "{\"pa"}}}}}}}),
      chunk({{"tool_calls",
              {{{"index", 1},
                {"id", "call_2"},
                {"type", "function"},
                {"function", {{"name", "list_dir"}, {"arguments", "{}"}}}}}}}),
      chunk({{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "th\":\"a\"}"}}}}}}}),
      chunk(json::object(), "tool_calls"),
      R"({"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":10}}})",
  });
  ASSERT_FALSE(s.error) << s.error->message;
  ASSERT_TRUE(s.complete);
  EXPECT_EQ(s.response.text(), "Let me check.");
  ASSERT_EQ(s.response.tool_uses().size(), 2u);
  EXPECT_EQ(s.response.tool_uses()[0]->id, "call_1");
  EXPECT_EQ(s.response.tool_uses()[0]->input, json({{"path", "a"}}));
  EXPECT_EQ(s.response.tool_uses()[1]->name, "list_dir");
  EXPECT_EQ(s.response.stop_reason, StopReason::tool_use);
  EXPECT_EQ(s.response.usage.input_tokens, 40);
  EXPECT_EQ(s.response.usage.cache_read_tokens, 10);
  EXPECT_EQ(s.response.usage.output_tokens, 7);
}

TEST(OpenAiWireTest, NewIdAtAUsedIndexIsANewCall) {
  auto s = stream({
      chunk({{"tool_calls",
              {{{"index", 0},
                {"id", "call_a"},
                {"function", {{"name", "read_file"}, {"arguments", "{\"path\":\"1\"}"}}}}}}}),
      chunk({{"tool_calls",
              {{{"index", 0},
                {"id", "call_b"},
                {"function", {{"name", "read_file"}, {"arguments", "{\"path\":"}}}}}}}),
      chunk({{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "\"2\"}"}}}}}}}),
      chunk(json::object(), "tool_calls"),
  });
  ASSERT_TRUE(s.complete);
  ASSERT_EQ(s.response.tool_uses().size(), 2u);
  EXPECT_EQ(s.response.tool_uses()[0]->input, json({{"path", "1"}}));
  EXPECT_EQ(s.response.tool_uses()[1]->id, "call_b");
  EXPECT_EQ(s.response.tool_uses()[1]->input, json({{"path", "2"}}));
}

TEST(OpenAiWireTest, StreamWithoutDoneIsIncompleteAndErrorsAreRetryable) {
  auto cut = stream({chunk({{"content", "half"}})}, false);
  EXPECT_FALSE(cut.complete);
  EXPECT_FALSE(cut.error);

  auto err = stream({chunk({{"content", "x"}}),
                     R"({"error":{"message":"upstream died","type":"server_error"}})"});
  ASSERT_TRUE(err.error);
  EXPECT_TRUE(err.error->retryable);
  EXPECT_NE(err.error->message.find("upstream died"), std::string::npos);

  auto garbage = stream({"{not json"});
  ASSERT_TRUE(garbage.error);
  EXPECT_EQ(garbage.error->kind, ErrorKind::protocol);
}

TEST(OpenAiWireTest, UnknownFieldsAreIgnored) {
  auto s = stream({
      chunk({{"reasoning_content", "thinking..."}, {"content", "ok"}}),
      R"({"id":"x","obfuscation":"abc","choices":[{"index":0,"delta":{},"finish_reason":"stop","moderation":{}}]})",
  });
  ASSERT_TRUE(s.complete);
  EXPECT_EQ(s.response.text(), "ok");
  EXPECT_EQ(s.response.stop_reason, StopReason::end_turn);
}
