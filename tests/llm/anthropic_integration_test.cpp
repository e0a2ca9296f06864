// The Anthropic client against loopr-mock-llm over loopback, streamed and not: answers, tool
// round trips with thinking echoed, retries, faults and the user-facing fatal errors.
#include <gtest/gtest.h>

#include "llm/providers.hpp"
#include "support/llm_wire_fixture.hpp"

// In the fixture's namespace: the suite uses its helpers and the llm types unqualified.
namespace loopr::llm::testing {

using nlohmann::json;

namespace {

const char* kScript = R"(
defaults:
  model: claude-opus-5-5
rules:
  - name: hello
    match: {first_user: "^say hello$"}
    reply:
      text: "Hello from mock-llm."
      usage: {input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 20}
  - name: tools-first
    match: {first_user: "^list the files$", turn: 1}
    reply:
      thinking: "I should look at the tree."
      redacted_thinking: "opaque-redacted-data"
      text: "Let me look."
      tool_use: {name: list_dir, input: {path: "src"}}
  - name: tools-second
    match: {first_user: "^list the files$", turn: 2, tool_result: "main.cpp"}
    reply: {text: "There is main.cpp.", stop_reason: end_turn}
  - name: rate-limited
    match: {first_user: "^rate limit me$"}
    replies:
      - fault: {status: 429, retry_after: "1", message: "slow down"}
      - text: "after the wait"
  - name: flaky
    match: {first_user: "^flaky$"}
    replies:
      - fault: {status: 500, message: "internal"}
      - fault: {status: 529}
      - text: "third time lucky"
  - name: cut
    match: {first_user: "^cut$"}
    replies:
      - {text: "this answer is cut short", fault: {cut_after_events: 3}}
      - text: "whole answer"
  - name: error-event
    match: {first_user: "^error event$"}
    reply: {text: "never whole", fault: {error_event: overloaded_error}}
  - name: malformed
    match: {first_user: "^malformed$"}
    reply: {text: "x", fault: {malformed_json: true}}
  - name: refusal
    match: {first_user: "^refuse$"}
    reply:
      text: ""
      stop_reason: refusal
      stop_details: {type: refusal, category: cyber, explanation: "not this"}
  - name: spend
    match: {first_user: "^spend$"}
    reply: {fault: {status: 429, error_code: enforced_spend_limit_reached, message: "limit"}}
)";

class AnthropicIntegrationTest : public MockWireTest {
 protected:
  AnthropicIntegrationTest()
      : MockWireTest("anthropic", "claude-opus-5-5", "ANTHROPIC_API_KEY", "sk-ant-test-key",
                     kScript) {}
};

}  // namespace

TEST_P(AnthropicIntegrationTest, PlainAnswerWithUsageCostAndHeaders) {
  auto [mock, h] = start();
  Outcome o = h.call(user_request("say hello", "001-002", "spec"));
  ASSERT_TRUE(o.ok()) << o.error().describe() << "\n" << mock.output();
  const Response& r = o.response();
  EXPECT_EQ(r.text(), "Hello from mock-llm.");
  EXPECT_EQ(r.stop_reason, StopReason::end_turn);
  EXPECT_EQ(r.model, "claude-opus-5-5");
  EXPECT_EQ(r.usage.input_tokens, 12);
  EXPECT_EQ(r.usage.output_tokens, 7);
  EXPECT_EQ(r.usage.cache_read_tokens, 100);
  EXPECT_EQ(r.usage.cache_write_tokens, 20);
  EXPECT_NEAR(r.usage.cost_usd, (12 * 4.0 + 7 * 20.0 + 20 * 5.0 + 100 * 0.2) / 1e6, 1e-12);
  EXPECT_FALSE(r.request_id.empty());

  auto log = mock.requests();
  ASSERT_EQ(log.size(), 1u);
  const json& req = log[0];
  EXPECT_EQ(req["path"], "/v1/messages");
  EXPECT_EQ(req["status"], 200);
  EXPECT_EQ(req["request_id"], r.request_id);
  EXPECT_EQ(req["headers"]["anthropic-version"], "2026-10-21");
  EXPECT_EQ(req["headers"]["authorization"], "Bearer [redacted]");
  EXPECT_EQ(req["headers"]["x-loopr-loop-id"], "001-002");
  EXPECT_EQ(req["headers"]["x-loopr-loop-type"], "spec");
  EXPECT_EQ(req["body"].value("stream", false), stream());
  for (const char* refused : {"temperature", "top_p", "top_k"})
    EXPECT_FALSE(req["body"].contains(refused));
}

TEST_P(AnthropicIntegrationTest, ToolUseRoundTripEchoesThinkingExactly) {
  auto [mock, h] = start();
  Request req = user_request("list the files", "code-001-001-001", "code");
  req.tools = {
      {"list_dir", "Lists a folder",
       json::parse(
           R"({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]})")}};
  Response r1;
  ASSERT_NO_FATAL_FAILURE(
      expect_one_tool_call(h, mock, req, "list_dir", json({{"path", "src"}}), r1));
  const ContentBlock& call = *r1.tool_uses()[0];
  ASSERT_EQ(r1.content.size(), 4u);
  EXPECT_EQ(r1.content[0].type, ContentBlock::Type::thinking);
  EXPECT_EQ(r1.content[1].type, ContentBlock::Type::redacted_thinking);

  answer_tools(req, r1, "main.cpp\nutil.cpp");
  Outcome second = h.call(req);
  ASSERT_TRUE(second.ok()) << second.error().describe() << "\n" << mock.output();
  EXPECT_EQ(second.response().text(), "There is main.cpp.");

  // What the mock received the second time: the first answer's blocks, unchanged and in order,
  // then the tool result.
  auto log = mock.requests();
  ASSERT_EQ(log.size(), 2u);
  const json& messages = log[1]["body"]["messages"];
  ASSERT_EQ(messages.size(), 3u);
  json received = json::array();
  for (const auto& b : r1.content) received.push_back(b.raw);
  EXPECT_EQ(messages[1]["role"], "assistant");
  EXPECT_EQ(messages[1]["content"], received);
  EXPECT_FALSE(received[0]["signature"].get<std::string>().empty());
  // The newest turn carries the rolling cache breakpoint (llm.cache: auto).
  EXPECT_EQ(messages[2]["content"][0], json({{"type", "tool_result"},
                                             {"tool_use_id", call.id},
                                             {"content", "main.cpp\nutil.cpp"},
                                             {"is_error", false},
                                             {"cache_control", {{"type", "ephemeral"}}}}));
  EXPECT_EQ(log[1]["rule"], "tools-second");
}

TEST_P(AnthropicIntegrationTest, RateLimitWaitsWhatRetryAfterSays) {
  auto [mock, h] = start();
  ASSERT_NO_FATAL_FAILURE(expect_rate_limit_waits_what_retry_after_says(h, mock, "rate limit me"));
  auto log = mock.requests();
  EXPECT_GE(log[1]["t_ms"].get<std::int64_t>() - log[0]["t_ms"].get<std::int64_t>(), 1000);
}

TEST_P(AnthropicIntegrationTest, ServerErrorsAreRetriedThenSucceed) {
  auto [mock, h] = start();
  std::vector<ErrorKind> seen;
  ASSERT_NO_FATAL_FAILURE(expect_retried_until_answered(h, "flaky", "third time lucky", seen));
  EXPECT_EQ(seen, (std::vector<ErrorKind>{ErrorKind::server, ErrorKind::overloaded}));
}

TEST_P(AnthropicIntegrationTest, CutStreamIsARetryableErrorNeverAHalfAnswer) {
  auto [mock, h] = start();
  LlmError cut;
  ASSERT_NO_FATAL_FAILURE(
      expect_cut_answer_is_a_retryable_error(h, stream() ? "message_stop" : "cut", cut));
  EXPECT_FALSE(cut.request_id.empty());
}

TEST_P(AnthropicIntegrationTest, ErrorEventAfter200IsRetryable) {
  auto [mock, h] = start();
  Outcome o = h.call(user_request("error event"));
  ASSERT_FALSE(o.ok());
  EXPECT_TRUE(o.error().retryable);
  if (stream()) {
    EXPECT_EQ(o.error().kind, ErrorKind::overloaded);
    EXPECT_NE(o.error().message.find("overloaded_error"), std::string::npos);
  }
}

TEST_P(AnthropicIntegrationTest, MalformedJsonIsARetryableProtocolError) {
  auto [mock, h] = start();
  LlmError malformed;
  ASSERT_NO_FATAL_FAILURE(expect_malformed_answer_is_a_retryable_protocol_error(h, malformed));
  EXPECT_NE(malformed.message.find("malformed"), std::string::npos);
}

TEST_P(AnthropicIntegrationTest, RefusalCarriesStopDetails) {
  auto [mock, h] = start();
  Outcome o = h.call(user_request("refuse"));
  ASSERT_TRUE(o.ok()) << o.error().describe();
  EXPECT_EQ(o.response().stop_reason, StopReason::refusal);
  EXPECT_EQ(o.response().stop_details["category"], "cyber");
  EXPECT_EQ(o.response().stop_details["explanation"], "not this");
}

TEST_P(AnthropicIntegrationTest, WrongKeyIsFatalWithAMessageAndRequestId) {
  auto [mock, h] = start(MockLlm::Options::key("sk-ant-right"));
  int waits = 0;
  Outcome o = h.call_with_retries(user_request("say hello"), RetryPolicy{},
                                  [&](const LlmError&, int, auto) { ++waits; });
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(waits, 0);
  EXPECT_FALSE(o.error().retryable);
  EXPECT_EQ(o.error().kind, ErrorKind::auth);
  EXPECT_EQ(o.error().http_status, 401);
  EXPECT_EQ(o.error().message.rfind("ANTHROPIC_API_KEY is missing or was refused (401)", 0), 0u)
      << o.error().message;
  EXPECT_FALSE(o.error().request_id.empty());
  EXPECT_EQ(mock.requests().at(0)["request_id"], o.error().request_id);

  ClientHarness no_key(config(mock), env_with({}));
  Outcome missing = no_key.call(user_request("say hello"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message.rfind("ANTHROPIC_API_KEY is missing or was refused (401)", 0),
            0u);
}

TEST_P(AnthropicIntegrationTest, SpendLimitStopsWithoutRetry) {
  auto [mock, h] = start();
  int waits = 0;
  Outcome o = h.call_with_retries(user_request("spend"), RetryPolicy{},
                                  [&](const LlmError&, int, auto) { ++waits; });
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::spend_limit);
  EXPECT_EQ(waits, 0);
  EXPECT_EQ(mock.requests().size(), 1u);
}

TEST_P(AnthropicIntegrationTest, ConnectionIsReusedAcrossCalls) {
  MockLlm mock(kScript);
  net::io_context io;
  WireSettings w;
  w.model = "claude-opus-5-5";
  w.api_key = "k";
  w.key_env = "ANTHROPIC_API_KEY";
  auto http = HttpClient::create(io, *parse_base_url(mock.url()), HttpOptions{});
  ASSERT_TRUE(http.ok());
  HttpClient* observer = http->get();
  auto client = make_http_llm_client(make_anthropic_wire(w), std::move(http.value()), stream(),
                                     std::make_shared<const Pricing>(Config::default_pricing()));
  for (int i = 0; i < 5; ++i) {
    std::optional<Outcome> out;
    Request req = user_request("say hello");
    net::co_spawn(
        io, [&]() -> awaitable<void> { out = co_await client->complete(req); }, net::detached);
    io.restart();
    io.run();
    ASSERT_TRUE(out && out->ok()) << out->error().describe();
  }
  EXPECT_EQ(observer->connections_opened(), 1u);
  EXPECT_EQ(mock.requests().size(), 5u);
}

INSTANTIATE_TEST_SUITE_P(StreamedAndNot, AnthropicIntegrationTest, ::testing::Bool(),
                         stream_or_plain);

}  // namespace loopr::llm::testing
