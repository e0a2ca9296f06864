#include <gtest/gtest.h>

#include <deque>

#include <loopr/llm/retry.hpp>

using namespace loopr;
using namespace loopr::llm;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

LlmError retryable(std::optional<milliseconds> after = std::nullopt) {
  LlmError e;
  e.kind = ErrorKind::server;
  e.retryable = true;
  e.retry_after = after;
  e.message = "server error";
  return e;
}

}  // namespace

TEST(RetryPolicyTest, ParsesRetryHeaders) {
  EXPECT_EQ(parse_should_retry("true"), true);
  EXPECT_EQ(parse_should_retry(" false "), false);
  EXPECT_EQ(parse_should_retry("yes"), std::nullopt);

  EXPECT_EQ(parse_retry_after_ms("1500"), 1500ms);
  EXPECT_EQ(parse_retry_after_ms("0.4"), 1ms);  // rounded up: never earlier than asked
  EXPECT_EQ(parse_retry_after_ms("-5"), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms("soon"), std::nullopt);

  EXPECT_EQ(parse_retry_after("2"), 2000ms);
  EXPECT_EQ(parse_retry_after("1.5"), 1500ms);
  EXPECT_EQ(parse_retry_after("abc"), std::nullopt);
}

TEST(RetryPolicyTest, ParsesHttpDatesRelativeToNow) {
  using namespace std::chrono;
  auto now = sys_days{2026y / October / 21} + 7h + 28min;
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2026 07:28:30 GMT", now), 30000ms);
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2026 07:27:00 GMT", now), 0ms);  // past: go now
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2026 07:28:30 PST", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("Wed, 32 Oct 2026 07:28:30 GMT", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("Wed, 21 Foo 2026 07:28:30 GMT", now), std::nullopt);
}

TEST(RetryPolicyTest, ServerWaitWinsAndIsCapped) {
  RetryPolicy p;
  p.max_server_wait = 60s;
  EXPECT_EQ(retry_delay(p, retryable(3s), 1, 0.5), 3s);
  EXPECT_EQ(retry_delay(p, retryable(3s), 5, 0.5), 3s);
  EXPECT_EQ(retry_delay(p, retryable(1h), 1, 0.5), 60s);
}

TEST(RetryPolicyTest, ExponentialBackoffWithJitter) {
  RetryPolicy p;  // 0.5 s doubling, cap 8 s, up to 25 % off
  std::vector<milliseconds> full;
  for (int attempt = 1; attempt <= 7; ++attempt)
    full.push_back(*retry_delay(p, retryable(), attempt, 0.0));
  EXPECT_EQ(full,
            (std::vector<milliseconds>{500ms, 1000ms, 2000ms, 4000ms, 8000ms, 8000ms, 8000ms}));
  EXPECT_EQ(retry_delay(p, retryable(), 1, 1.0), 375ms);
  EXPECT_EQ(retry_delay(p, retryable(), 5, 0.5), 7000ms);
}

TEST(RetryPolicyTest, FatalOrUsedUpMeansNoRetry) {
  RetryPolicy p;
  p.max_retries = 2;
  LlmError fatal;
  fatal.retryable = false;
  EXPECT_EQ(retry_delay(p, fatal, 1, 0), std::nullopt);
  EXPECT_TRUE(retry_delay(p, retryable(), 2, 0));
  EXPECT_EQ(retry_delay(p, retryable(), 3, 0), std::nullopt);
}

namespace {

/// Answers from a script of outcomes, counting calls.
class ScriptedClient final : public LlmClient {
 public:
  explicit ScriptedClient(std::deque<Outcome> script) : script_(std::move(script)) {}
  awaitable<Outcome> complete(const Request&) override {
    ++calls;
    Outcome o = script_.front();
    script_.pop_front();
    co_return o;
  }
  bool runs_own_tools() const override { return false; }
  const std::string& provider() const override { return name_; }
  const std::string& model() const override { return name_; }
  int calls = 0;

 private:
  std::deque<Outcome> script_;
  std::string name_ = "scripted";
};

Response answer(const std::string& text) {
  Response r;
  r.content.push_back(ContentBlock::make_text(text));
  r.stop_reason = StopReason::end_turn;
  return r;
}

struct RetryRun {
  std::optional<Outcome> outcome;
  std::vector<std::pair<int, milliseconds>> waits;
  milliseconds elapsed{0};
};

RetryRun run(LlmClient& client, const RetryPolicy& policy) {
  net::io_context io;
  RetryRun out;
  Request req;
  auto start = std::chrono::steady_clock::now();
  net::co_spawn(
      io,
      [&]() -> awaitable<void> {
        out.outcome = co_await complete_with_retries(
            client, req, policy, [&](const LlmError&, int attempt, milliseconds wait) {
              out.waits.emplace_back(attempt, wait);
            });
      },
      net::detached);
  io.run();
  out.elapsed = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  return out;
}

}  // namespace

TEST(CompleteWithRetriesTest, RetriesUntilSuccessAndWaitsWhatTheHookWasTold) {
  ScriptedClient client({retryable(30ms), retryable(20ms), answer("done")});
  RetryRun r = run(client, RetryPolicy{});
  ASSERT_TRUE(r.outcome && r.outcome->ok());
  EXPECT_EQ(r.outcome->response().text(), "done");
  EXPECT_EQ(client.calls, 3);
  EXPECT_EQ(r.waits, (std::vector<std::pair<int, milliseconds>>{{1, 30ms}, {2, 20ms}}));
  EXPECT_GE(r.elapsed, 50ms);
}

TEST(CompleteWithRetriesTest, FatalErrorReturnsAtOnce) {
  LlmError fatal;
  fatal.kind = ErrorKind::auth;
  fatal.message = "ANTHROPIC_API_KEY is missing or was refused (401)";
  ScriptedClient client({fatal, answer("never")});
  RetryRun r = run(client, RetryPolicy{});
  ASSERT_TRUE(r.outcome && !r.outcome->ok());
  EXPECT_EQ(r.outcome->error().kind, ErrorKind::auth);
  EXPECT_EQ(client.calls, 1);
  EXPECT_TRUE(r.waits.empty());
}

TEST(CompleteWithRetriesTest, GivesUpAfterMaxRetriesWithTheLastError) {
  RetryPolicy p;
  p.max_retries = 2;
  LlmError last = retryable(1ms);
  last.message = "third failure";
  ScriptedClient client({retryable(1ms), retryable(1ms), last, answer("too late")});
  RetryRun r = run(client, p);
  ASSERT_TRUE(r.outcome && !r.outcome->ok());
  EXPECT_EQ(r.outcome->error().message, "third failure");
  EXPECT_EQ(client.calls, 3);
  EXPECT_EQ(r.waits.size(), 2u);
}
