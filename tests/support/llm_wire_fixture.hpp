// The steps the HTTP wire clients' integration suites (anthropic, openai, openai-responses) share
// against loopr-mock-llm: a fixture run streamed and not, answering a tool call, and the retry,
// cut-stream and malformed-answer checks each wire must pass the same way. Each suite's mock
// script holds the rules these steps call by their first user line.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llm/mock_llm_process.hpp"

namespace loopr::llm::testing {

/// A wire client's suite against the mock, its parameter saying whether the client streams.
class MockWireTest : public ::testing::TestWithParam<bool> {
 protected:
  /// `provider` with `model`, its key `key` in the environment variable `key_env`; the mock
  /// runs `script`, the suite's rules.
  MockWireTest(std::string provider, std::string model, std::string key_env, std::string key,
               std::string script)
      : provider_(std::move(provider)),
        model_(std::move(model)),
        key_env_(std::move(key_env)),
        key_(std::move(key)),
        script_(std::move(script)) {}

  void SetUp() override { LOOPR_REQUIRE_MOCK(); }
  bool stream() const { return GetParam(); }
  /// A suite changes this to set what its provider's server needs.
  virtual Config config(const MockLlm& mock) const {
    Config c = mock_config(provider_, mock.url(), stream());
    c.llm.model = model_;
    return c;
  }
  EnvLookup env() const { return env_with({{key_env_, key_}}); }

  /// The mock and a client of it, what every test starts with: `auto [mock, h] = start();`.
  struct Started {
    MockLlm& mock;
    ClientHarness& h;
  };
  /// Starts the mock on the suite's script with `options` and a client with the suite's config
  /// and key; both live until the test ends.
  Started start(MockLlm::Options options = {}) {
    mock_.emplace(script_, std::move(options));
    client_.emplace(config(*mock_), env());
    return {*mock_, *client_};
  }

 private:
  std::string provider_, model_, key_env_, key_, script_;
  std::optional<MockLlm> mock_;
  std::optional<ClientHarness> client_;
};

/// Names a MockWireTest suite's two runs `stream` and `plain`.
inline std::string stream_or_plain(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "stream" : "plain";
}

/// Adds to `request` the answer `resp` gave and a user turn answering each of its tool calls
/// with `content`, as the engine does before the next call.
inline void answer_tools(Request& request, const Response& resp, const std::string& content) {
  request.messages.push_back(resp.to_message());
  Message results;
  results.role = Role::user;
  for (const ContentBlock* use : resp.tool_uses())
    results.content.push_back(ContentBlock::make_tool_result(use->id, content));
  request.messages.push_back(results);
}

/// Calls `request`, whose rule answers with one call of the tool `name` with `input`: the answer
/// stops for tool use with that one call, and `first` gets it.
inline void expect_one_tool_call(ClientHarness& h, const MockLlm& mock, const Request& request,
                                 const std::string& name, const nlohmann::json& input,
                                 Response& first) {
  Outcome o = h.call(request);
  ASSERT_TRUE(o.ok()) << o.error().describe() << "\n" << mock.output();
  first = o.response();
  EXPECT_EQ(first.stop_reason, StopReason::tool_use);
  ASSERT_EQ(first.tool_uses().size(), 1u);
  EXPECT_EQ(first.tool_uses()[0]->name, name);
  EXPECT_EQ(first.tool_uses()[0]->input, input);
}

/// Calls `prompt`, whose rule first answers 429 with `retry-after: 1`, with retries: the one
/// wait is the second the server asked for, and the second request brings "after the wait".
inline void expect_rate_limit_waits_what_retry_after_says(ClientHarness& h, const MockLlm& mock,
                                                          const std::string& prompt) {
  using namespace std::chrono_literals;
  std::vector<std::pair<ErrorKind, std::chrono::milliseconds>> waits;
  auto start = std::chrono::steady_clock::now();
  Outcome o = h.call_with_retries(user_request(prompt), RetryPolicy{},
                                  [&](const LlmError& e, int, std::chrono::milliseconds wait) {
                                    waits.emplace_back(e.kind, wait);
                                  });
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(o.ok()) << o.error().describe();
  EXPECT_EQ(o.response().text(), "after the wait");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].first, ErrorKind::rate_limited);
  EXPECT_EQ(waits[0].second, 1000ms);
  EXPECT_GE(elapsed, 1000ms);
  auto log = mock.requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["status"], 429);
}

/// Calls `prompt`, whose rule fails before it answers, with retries 10 ms apart: the answer
/// comes and says `answer`; `retried` gets the kind of each error retried on the way.
inline void expect_retried_until_answered(ClientHarness& h, const std::string& prompt,
                                          const std::string& answer,
                                          std::vector<ErrorKind>& retried) {
  using namespace std::chrono_literals;
  RetryPolicy fast;
  fast.initial_backoff = 10ms;
  Outcome o = h.call_with_retries(user_request(prompt), fast,
                                  [&](const LlmError& e, int, auto) { retried.push_back(e.kind); });
  ASSERT_TRUE(o.ok()) << o.error().describe();
  EXPECT_EQ(o.response().text(), answer);
}

/// Calls "cut", whose rule first cuts the answer short and then answers "whole answer": the cut
/// one is a retryable network error whose message names `cut_marker` (the missing end event, or
/// "cut" unstreamed), never a half answer; `error` gets it.
inline void expect_cut_answer_is_a_retryable_error(ClientHarness& h, const std::string& cut_marker,
                                                   LlmError& error) {
  Outcome o = h.call(user_request("cut"));
  ASSERT_FALSE(o.ok());
  error = o.error();
  EXPECT_TRUE(o.error().retryable);
  EXPECT_EQ(o.error().kind, ErrorKind::network);
  EXPECT_NE(o.error().message.find(cut_marker), std::string::npos) << o.error().message;
  Outcome again = h.call(user_request("cut"));
  ASSERT_TRUE(again.ok()) << again.error().describe();
  EXPECT_EQ(again.response().text(), "whole answer");
}

/// Calls "malformed", whose rule answers JSON that does not parse: a retryable protocol error,
/// which `error` gets.
inline void expect_malformed_answer_is_a_retryable_protocol_error(ClientHarness& h,
                                                                  LlmError& error) {
  Outcome o = h.call(user_request("malformed"));
  ASSERT_FALSE(o.ok());
  error = o.error();
  EXPECT_EQ(o.error().kind, ErrorKind::protocol);
  EXPECT_TRUE(o.error().retryable);
}

}  // namespace loopr::llm::testing
