// The OpenAI-compatible client against loopr-mock-llm's chat completions endpoint, streamed
// and not: answers, a tool-call round trip, usage, errors.
#include <gtest/gtest.h>

#include "support/llm_wire_fixture.hpp"

// In the fixture's namespace: the suite uses its helpers and the llm types unqualified.
namespace loopr::llm::testing {

using nlohmann::json;

namespace {

const char* kScript = R"(
rules:
  - name: hello
    match: {api: openai, first_user: "^say hello$"}
    reply:
      text: "Hello from the chat endpoint."
      usage: {input_tokens: 30, output_tokens: 6, cache_read_input_tokens: 10}
  - name: call
    match: {api: openai, first_user: "^run make$", turn: 1}
    reply:
      text: "Running it."
      tool_use: {name: run_command, input: {command: make}}
  - name: after-call
    match: {api: openai, first_user: "^run make$", turn: 2, tool_result: "build ok"}
    reply: {text: "The build passed."}
  - name: rejected
    match: {api: openai, first_user: "^bad$"}
    reply: {fault: {status: 400, message: "messages: invalid"}}
)";

class OpenAiIntegrationTest : public MockWireTest {
 protected:
  OpenAiIntegrationTest()
      : MockWireTest("openai", "gpt-9", "OPENAI_API_KEY", "sk-local", kScript) {}
  Config config(const MockLlm& mock) const override {
    Config c = MockWireTest::config(mock);
    c.llm.max_tokens_field = "max_tokens";  // as for a local server
    return c;
  }
};

}  // namespace

TEST_P(OpenAiIntegrationTest, PlainAnswerAndUsage) {
  auto [mock, h] = start();
  Outcome o = h.call(user_request("say hello", "001", "plan"));
  ASSERT_TRUE(o.ok()) << o.error().describe() << "\n" << mock.output();
  EXPECT_EQ(o.response().text(), "Hello from the chat endpoint.");
  EXPECT_EQ(o.response().stop_reason, StopReason::end_turn);
  EXPECT_EQ(o.response().usage.output_tokens, 6);
  EXPECT_EQ(o.response().usage.cache_read_tokens, 10);
  EXPECT_FALSE(o.response().request_id.empty());

  auto log = mock.requests();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["path"], "/v1/chat/completions");
  EXPECT_EQ(log[0]["api"], "openai");
  EXPECT_EQ(log[0]["headers"]["x-loopr-loop-id"], "001");
  EXPECT_EQ(log[0]["headers"]["authorization"], "Bearer [redacted]");
  EXPECT_TRUE(log[0]["body"].contains("max_tokens"));
  EXPECT_FALSE(log[0]["body"].contains("max_completion_tokens"));
  if (GetParam()) {
    EXPECT_EQ(log[0]["body"]["stream_options"]["include_usage"], true);
  }
}

TEST_P(OpenAiIntegrationTest, ToolCallRoundTrip) {
  auto [mock, h] = start();
  Request req = user_request("run make", "code-001-001-001", "code");
  req.tools = {{"run_command", "Runs a shell command",
                json::parse(R"({"type":"object","properties":{"command":{"type":"string"}}})")}};
  Response first;
  ASSERT_NO_FATAL_FAILURE(
      expect_one_tool_call(h, mock, req, "run_command", json({{"command", "make"}}), first));
  const ContentBlock& call = *first.tool_uses()[0];

  answer_tools(req, first, "build ok");
  Outcome second = h.call(req);
  ASSERT_TRUE(second.ok()) << second.error().describe() << "\n" << mock.output();
  EXPECT_EQ(second.response().text(), "The build passed.");

  const json messages = mock.requests().at(1)["body"]["messages"];
  ASSERT_EQ(messages.size(), 4u);  // system, user, assistant with tool_calls, tool
  EXPECT_EQ(messages[2]["tool_calls"][0]["id"], call.id);
  EXPECT_EQ(messages[3],
            json({{"role", "tool"}, {"tool_call_id", call.id}, {"content", "build ok"}}));
}

TEST_P(OpenAiIntegrationTest, BadRequestIsFatalWithTheServerMessage) {
  auto [mock, h] = start();
  Outcome o = h.call(user_request("bad"));
  ASSERT_FALSE(o.ok());
  EXPECT_FALSE(o.error().retryable);
  EXPECT_EQ(o.error().kind, ErrorKind::invalid_request);
  EXPECT_NE(o.error().message.find("messages: invalid"), std::string::npos) << o.error().message;
}

INSTANTIATE_TEST_SUITE_P(StreamedAndNot, OpenAiIntegrationTest, ::testing::Bool(), stream_or_plain);

}  // namespace loopr::llm::testing
