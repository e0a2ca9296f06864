// The retry loop around LlmClient::complete; the policy itself lives in retry_policy.cpp.
#include <spdlog/spdlog.h>

#include <random>

#include <loopr/llm/retry.hpp>

namespace loopr::llm {

namespace {
double random01() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}
}  // namespace

awaitable<Outcome> complete_with_retries(LlmClient& client, const Request& request,
                                         const RetryPolicy& policy, BeforeRetry before_wait) {
  for (int attempt = 1;; ++attempt) {
    Outcome outcome = co_await client.complete(request);
    if (outcome.ok()) co_return outcome;
    auto wait = retry_delay(policy, outcome.error(), attempt, random01());
    if (!wait) co_return outcome;
    spdlog::info("{} call for loop {} failed ({}), retry {}/{} in {} ms", client.provider(),
                 request.loop_id, outcome.error().describe(), attempt, policy.max_retries,
                 wait->count());
    if (before_wait) before_wait(outcome.error(), attempt, *wait);
    net::steady_timer timer(co_await net::this_coro::executor);
    timer.expires_after(*wait);
    co_await timer.async_wait(net::use_awaitable);
  }
}

}  // namespace loopr::llm
