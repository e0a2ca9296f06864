// When to try a failed model call again and how long to wait (WIRE.md §1 retry rules), and a
// wrapper that retries with a hook before each wait (the scheduler pauses a provider on 429).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>

#include <loopr/llm/client.hpp>
#include <loopr/llm/types.hpp>
#include <loopr/net/asio.hpp>

namespace loopr::llm {

struct RetryPolicy {
  int max_retries = 8;                             ///< retries after the first attempt
  std::chrono::milliseconds initial_backoff{500};  ///< doubled per retry …
  std::chrono::milliseconds max_backoff{8000};     ///< … up to this
  double jitter = 0.25;                            ///< up to this fraction is taken off
  /// A server-given wait longer than this is cut to it (a wrong header must not park a loop
  /// for hours; a wait that is too short just earns another 429).
  std::chrono::milliseconds max_server_wait{std::chrono::minutes(5)};
};

/// The policy the config asks for (`llm.max_retries`); the rest keeps the defaults above.
RetryPolicy retry_policy(const LlmConfig& config);

/// `x-should-retry: true|false`; nullopt if absent or anything else.
std::optional<bool> parse_should_retry(std::string_view value);
/// `retry-after-ms: 1500` (decimals allowed); nullopt if malformed or negative.
std::optional<std::chrono::milliseconds> parse_retry_after_ms(std::string_view value);
/// `retry-after: 2` (seconds, decimals allowed) or an HTTP date (`Wed, 21 Oct 2026 07:28:00
/// GMT`) measured from `now` (a past date is 0); nullopt if malformed.
std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value,
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

/// The wait before retry number `attempt` (1 = the first retry), or nullopt when `error` is
/// not retryable or the retries are used up. The server's wait wins (capped); otherwise
/// min(initial·2^(attempt-1), max) minus up to `jitter` of it, `random01` ∈ [0,1) choosing how
/// much.
std::optional<std::chrono::milliseconds> retry_delay(const RetryPolicy& policy,
                                                     const LlmError& error, int attempt,
                                                     double random01);

/// A number in [0, 1) for the jitter of `retry_delay` (thread-safe).
double retry_jitter();

/// The one retry loop of a model call. `attempt(n)` makes call number n (1-based) and returns an
/// awaitable of std::optional<Outcome>; nullopt ends the loop (the caller gave up: stopped).
/// While the call fails with a retryable error and retries are left, `pause(error, n, wait)` is
/// awaited (an awaitable<bool>; false ends the loop with nullopt) and the call is made again.
/// Returns the first response, a fatal error, or the last error once the retries are used up.
///
/// Both callables should be plain functions or lambdas that call a coroutine function with the
/// values it needs (never coroutine lambdas with captures: g++ 12 miscompiles those).
template <typename Attempt, typename Pause>
awaitable<std::optional<Outcome>> retry_model_call(RetryPolicy policy, Attempt attempt,
                                                   Pause pause) {
  for (int n = 1;; ++n) {
    std::optional<Outcome> outcome = co_await attempt(n);
    if (!outcome || outcome->ok()) co_return outcome;
    std::optional<std::chrono::milliseconds> wait =
        retry_delay(policy, outcome->error(), n, retry_jitter());
    if (!wait) co_return outcome;
    bool go_on = co_await pause(outcome->error(), n, *wait);
    if (!go_on) co_return std::nullopt;
  }
}

/// Called before each wait with the error, the retry number (1-based) and the wait.
using BeforeRetry =
    std::function<void(const LlmError& error, int attempt, std::chrono::milliseconds wait)>;

/// `client.complete(request)`, retried as `policy` says (`retry_model_call` with a timer for the
/// waits). Returns the first response, a fatal error, or the last error once the retries are used
/// up.
awaitable<Outcome> complete_with_retries(LlmClient& client, const Request& request,
                                         const RetryPolicy& policy, BeforeRetry before_wait = {});

}  // namespace loopr::llm
