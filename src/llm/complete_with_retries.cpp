// complete_with_retries: the one retry loop (retry.hpp) with a plain timer for the waits; the
// policy itself lives in retry_policy.cpp. (The engine uses the same loop with its scheduler
// slots and a wait that a stop interrupts.)
#include <spdlog/spdlog.h>

#include <random>

#include <loopr/llm/retry.hpp>

namespace loopr::llm {

double retry_jitter() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

namespace {

awaitable<std::optional<Outcome>> complete_once(LlmClient& client, const Request& request) {
  Outcome outcome = co_await client.complete(request);
  co_return outcome;
}

awaitable<bool> wait_before_retry(const LlmClient& client, const Request& request,
                                  const RetryPolicy& policy, const BeforeRetry& before_wait,
                                  LlmError error, int attempt, std::chrono::milliseconds wait) {
  spdlog::info("{} call for loop {} failed ({}), retry {}/{} in {} ms", client.provider(),
               request.loop_id, error.describe(), attempt, policy.max_retries, wait.count());
  if (before_wait) before_wait(error, attempt, wait);
  net::steady_timer timer(co_await net::this_coro::executor);
  timer.expires_after(wait);
  co_await timer.async_wait(net::use_awaitable);
  co_return true;
}

}  // namespace

awaitable<Outcome> complete_with_retries(LlmClient& client, const Request& request,
                                         const RetryPolicy& policy, BeforeRetry before_wait) {
  auto attempt = [&client, &request](int) { return complete_once(client, request); };
  auto pause = [&](const LlmError& error, int n, std::chrono::milliseconds wait) {
    return wait_before_retry(client, request, policy, before_wait, error, n, wait);
  };
  std::optional<Outcome> outcome = co_await retry_model_call(policy, attempt, pause);
  co_return std::move(*outcome);  // never nullopt: neither callable gives up
}

}  // namespace loopr::llm
