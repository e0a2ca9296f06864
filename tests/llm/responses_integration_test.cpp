// The OpenAI Responses API client (`llm.provider: openai-responses`) against loopr-mock-llm's
// /v1/responses over loopback, streamed and not: the suite the Anthropic client passes (answers
// with usage and cached tokens, a tool loop with reasoning echoed, 429 with retry-after, server
// errors retried, cut streams, error events, malformed JSON, refusals, fatal errors).
#include <gtest/gtest.h>

#include "support/llm_wire_fixture.hpp"

// In the fixture's namespace: the suite uses its helpers and the llm types unqualified.
namespace loopr::llm::testing {

using nlohmann::json;

namespace {

const char* kScript = R"(
defaults:
  model: gpt-9
rules:
  - name: hello
    match: {api: responses, first_user: "^say hello$"}
    reply:
      text: "Hello from the Responses API."
      usage: {input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 100}
  - name: tools-first
    match: {api: responses, first_user: "^list the files$", turn: 1}
    reply:
      thinking: "I should look at the tree."
      text: "Let me look."
      tool_use: {name: list_dir, input: {path: "src"}}
  - name: tools-second
    match: {api: responses, first_user: "^list the files$", turn: 2, tool_result: "main.cpp"}
    reply: {text: "There is main.cpp."}
  - name: rate-limited
    match: {api: responses, first_user: "^rate limit me$"}
    replies:
      - fault: {status: 429, retry_after: "1", message: "slow down"}
      - text: "after the wait"
  - name: flaky
    match: {api: responses, first_user: "^flaky$"}
    replies:
      - fault: {status: 500, message: "internal"}
      - fault: {status: 503}
      - text: "third time lucky"
  - name: cut
    match: {api: responses, first_user: "^cut$"}
    replies:
      - {text: "this answer is cut short", fault: {cut_after_events: 3}}
      - text: "whole answer"
  - name: error-event
    match: {api: responses, first_user: "^error event$"}
    reply: {text: "never whole", fault: {error_event: overloaded_error}}
  - name: malformed
    match: {api: responses, first_user: "^malformed$"}
    reply: {text: "x", fault: {malformed_json: true}}
  - name: refusal
    match: {api: responses, first_user: "^refuse$"}
    reply: {text: "I cannot help with that.", stop_reason: refusal}
  - name: long
    match: {api: responses, first_user: "^too long$"}
    reply: {text: "cut at the lim", stop_reason: max_tokens}
)";

class ResponsesIntegrationTest : public MockWireTest {
 protected:
  ResponsesIntegrationTest()
      : MockWireTest("openai-responses", "gpt-9", "OPENAI_API_KEY", "sk-responses-test", kScript) {}
};

}  // namespace

TEST_P(ResponsesIntegrationTest, PlainAnswerWithUsageCachedTokensAndHeaders) {
  auto [mock, h] = start();
  Outcome o = h.call(user_request("say hello", "001", "plan"));
  ASSERT_TRUE(o.ok()) << o.error().describe() << "\n" << mock.output();
  const Response& r = o.response();
  EXPECT_EQ(r.text(), "Hello from the Responses API.");
  EXPECT_EQ(r.stop_reason, StopReason::end_turn);
  EXPECT_EQ(r.model, "gpt-9");
  EXPECT_EQ(r.id.rfind("resp_", 0), 0u) << r.id;
  // input_tokens (112) includes the cached 100: loopr counts them apart.
  EXPECT_EQ(r.usage.input_tokens, 12);
  EXPECT_EQ(r.usage.cache_read_tokens, 100);
  EXPECT_EQ(r.usage.output_tokens, 7);
  EXPECT_FALSE(r.request_id.empty());

  auto log = mock.requests();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["path"], "/v1/responses");
  EXPECT_EQ(log[0]["api"], "responses");
  EXPECT_EQ(log[0]["headers"]["x-loopr-loop-id"], "001");
  EXPECT_EQ(log[0]["headers"]["x-loopr-loop-type"], "plan");
  EXPECT_EQ(log[0]["headers"]["authorization"], "Bearer [redacted]");
  const json& body = log[0]["body"];
  EXPECT_EQ(body["instructions"], "You are a test.");
  EXPECT_EQ(body["store"], false);
  EXPECT_EQ(body["input"][0],
            json({{"type", "message"},
                  {"role", "user"},
                  {"content", json::array({{{"type", "input_text"}, {"text", "say hello"}}})}}));
  EXPECT_EQ(body.value("stream", false), stream());
}

TEST_P(ResponsesIntegrationTest, ToolLoopEchoesReasoningAndAnswersByCallId) {
  auto [mock, h] = start();
  Request req = user_request("list the files", "code-001", "code");
  req.tools = {{"list_dir", "Lists a folder",
                json::parse(R"({"type":"object","properties":{"path":{"type":"string"}}})")}};
  Response first;
  ASSERT_NO_FATAL_FAILURE(
      expect_one_tool_call(h, mock, req, "list_dir", json({{"path", "src"}}), first));
  EXPECT_EQ(first.text(), "Let me look.");
  const ContentBlock& call = *first.tool_uses()[0];
  EXPECT_EQ(call.id.rfind("call_", 0), 0u) << call.id;

  answer_tools(req, first, "main.cpp\nutil.cpp");
  Outcome second = h.call(req);
  ASSERT_TRUE(second.ok()) << second.error().describe() << "\n" << mock.output();
  EXPECT_EQ(second.response().text(), "There is main.cpp.");
  EXPECT_EQ(second.response().stop_reason, StopReason::end_turn);

  auto log = mock.requests();
  ASSERT_EQ(log.size(), 2u);
  const json& tools = log[0]["body"]["tools"];
  EXPECT_EQ(tools[0]["type"], "function");
  EXPECT_EQ(tools[0]["name"], "list_dir");
  const json input = log[1]["body"]["input"];
  // user, reasoning (with its encrypted content), message, function_call, function_call_output
  ASSERT_EQ(input.size(), 5u) << input.dump(1);
  EXPECT_EQ(input[1]["type"], "reasoning");
  EXPECT_TRUE(input[1].contains("encrypted_content"));
  EXPECT_EQ(input[1]["encrypted_content"], first.content[0].raw["encrypted_content"]);
  EXPECT_EQ(input[2]["type"], "message");
  EXPECT_FALSE(input[2].contains("id"));  // a stateless request names no stored item
  EXPECT_EQ(input[3]["type"], "function_call");
  EXPECT_EQ(input[3]["call_id"], call.id);
  EXPECT_EQ(input[3]["arguments"], "{\"path\":\"src\"}");
  EXPECT_EQ(input[4], json({{"type", "function_call_output"},
                            {"call_id", call.id},
                            {"output", "main.cpp\nutil.cpp"}}));
  EXPECT_EQ(log[1]["rule"], "tools-second");
}

TEST_P(ResponsesIntegrationTest, AnUnansweredCallIsRefusedAsTheServiceWould) {
  auto [mock, h] = start();
  Request req = user_request("list the files");
  Outcome first = h.call(req);
  ASSERT_TRUE(first.ok()) << first.error().describe();
  req.messages.push_back(first.response().to_message());
  req.messages.push_back(Message::user_text("go on"));  // no function_call_output
  Outcome second = h.call(req);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().kind, ErrorKind::invalid_request);
  EXPECT_NE(second.error().message.find("No tool output found"), std::string::npos)
      << second.error().message;
}

TEST_P(ResponsesIntegrationTest, RateLimitWaitsWhatRetryAfterSays) {
  auto [mock, h] = start();
  expect_rate_limit_waits_what_retry_after_says(h, mock, "rate limit me");
}

TEST_P(ResponsesIntegrationTest, ServerErrorsAreRetriedThenSucceed) {
  auto [mock, h] = start();
  std::vector<ErrorKind> seen;
  ASSERT_NO_FATAL_FAILURE(expect_retried_until_answered(h, "flaky", "third time lucky", seen));
  EXPECT_EQ(seen.size(), 2u);
}

TEST_P(ResponsesIntegrationTest, CutStreamIsARetryableErrorNeverAHalfAnswer) {
  auto [mock, h] = start();
  LlmError cut;
  expect_cut_answer_is_a_retryable_error(h, stream() ? "response.completed" : "cut", cut);
}

TEST_P(ResponsesIntegrationTest, ErrorEventAfter200IsRetryable) {
  auto [mock, h] = start();
  Outcome o = h.call(user_request("error event"));
  ASSERT_FALSE(o.ok());
  EXPECT_TRUE(o.error().retryable);
  if (stream()) {
    EXPECT_NE(o.error().message.find("server_error"), std::string::npos);
  }
}

TEST_P(ResponsesIntegrationTest, MalformedJsonIsARetryableProtocolError) {
  auto [mock, h] = start();
  LlmError malformed;
  expect_malformed_answer_is_a_retryable_protocol_error(h, malformed);
}

TEST_P(ResponsesIntegrationTest, RefusalAndIncompleteMapOntoStopReasons) {
  auto [mock, h] = start();
  Outcome refused = h.call(user_request("refuse"));
  ASSERT_TRUE(refused.ok()) << refused.error().describe();
  EXPECT_EQ(refused.response().stop_reason, StopReason::refusal);
  EXPECT_EQ(refused.response().stop_details["explanation"], "I cannot help with that.");
  Outcome cut = h.call(user_request("too long"));
  ASSERT_TRUE(cut.ok()) << cut.error().describe();
  EXPECT_EQ(cut.response().stop_reason, StopReason::max_tokens);
  EXPECT_EQ(cut.response().text(), "cut at the lim");
}

TEST_P(ResponsesIntegrationTest, WrongKeyIsFatalWithAMessage) {
  auto [mock, h] = start(MockLlm::Options::key("sk-the-right-one"));
  Outcome o = h.call(user_request("say hello"));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::auth);
  EXPECT_FALSE(o.error().retryable);
  EXPECT_NE(o.error().message.find("OPENAI_API_KEY"), std::string::npos) << o.error().message;
}

INSTANTIATE_TEST_SUITE_P(StreamedAndNot, ResponsesIntegrationTest, ::testing::Bool(),
                         stream_or_plain);

}  // namespace loopr::llm::testing
