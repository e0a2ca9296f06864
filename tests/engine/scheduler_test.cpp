// The scheduler's decisions on a real io_context, without a model.
#include <gtest/gtest.h>

#include <loopr/engine/scheduler.hpp>

using namespace loopr;
using namespace loopr::engine;
using namespace std::chrono_literals;

namespace {

// Acquires a slot, records the order of grants, holds the slot for `hold`.
awaitable<void> take(Scheduler& s, LoopType type, bool continuation, std::string name,
                     std::vector<std::string>& order, std::chrono::milliseconds hold) {
  auto slot = co_await s.acquire(type, continuation, name);
  if (!slot) co_return;
  order.push_back(name);
  net::steady_timer t(co_await net::this_coro::executor, hold);
  co_await t.async_wait(net::use_awaitable);
}

}  // namespace

TEST(SchedulerUnitTest, HigherPriorityFirstFifoAmongEquals) {
  net::io_context io;
  SchedulerOptions o;
  o.slots = 1;
  o.rate_limit = 1000;
  Scheduler s(io.get_executor(), o);
  std::vector<std::string> order;
  // The first grabs the only slot; the others queue while it holds it.
  net::co_spawn(io, take(s, LoopType::plan, false, "first", order, 20ms), net::detached);
  net::co_spawn(io, take(s, LoopType::plan, false, "plan-a", order, 1ms), net::detached);
  net::co_spawn(io, take(s, LoopType::code, false, "code-a", order, 1ms), net::detached);
  net::co_spawn(io, take(s, LoopType::spec, false, "spec", order, 1ms), net::detached);
  net::co_spawn(io, take(s, LoopType::code, false, "code-b", order, 1ms), net::detached);
  net::co_spawn(io, take(s, LoopType::plan, true, "plan-continuing", order, 1ms), net::detached);
  io.run();
  EXPECT_EQ(order, (std::vector<std::string>{"first", "code-a", "code-b", "plan-continuing", "spec", "plan-a"}));
  EXPECT_EQ(s.stats().peak_in_flight, 1);
}

TEST(SchedulerUnitTest, AgeingLetsALongWaiterOvertake) {
  net::io_context io;
  SchedulerOptions o;
  o.slots = 1;
  o.ageing_step = 1ms;  // +1 priority per millisecond waited
  o.ageing_cap = 1000;
  Scheduler s(io.get_executor(), o);
  std::vector<std::string> order;
  net::co_spawn(io, take(s, LoopType::code, false, "holder", order, 150ms), net::detached);
  net::co_spawn(io, take(s, LoopType::plan, false, "old-plan", order, 1ms), net::detached);
  // A code waiter that arrives 100 ms later has base 100 vs the plan's 40 + ~150.
  net::steady_timer later(io, 100ms);
  later.async_wait([&](auto) { net::co_spawn(io, take(s, LoopType::code, false, "new-code", order, 1ms), net::detached); });
  io.run();
  EXPECT_EQ(order, (std::vector<std::string>{"holder", "old-plan", "new-code"}));
}

TEST(SchedulerUnitTest, ProviderPauseHoldsEveryoneAndIsPersisted) {
  net::io_context io;
  std::vector<TimestampMs> persisted;
  Scheduler s(io.get_executor(), SchedulerOptions{}, 0, [&](TimestampMs until) { persisted.push_back(until); });
  auto until = std::chrono::system_clock::now() + 200ms;
  s.pause_until(until);
  ASSERT_EQ(persisted.size(), 1u);
  EXPECT_NEAR(static_cast<double>(persisted[0]), static_cast<double>(now_ms() + 200), 50);
  std::vector<std::string> order;
  auto start = std::chrono::steady_clock::now();
  net::co_spawn(io, take(s, LoopType::code, false, "a", order, 1ms), net::detached);
  net::co_spawn(io, take(s, LoopType::plan, false, "b", order, 1ms), net::detached);
  io.run();
  EXPECT_EQ(order.size(), 2u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 190ms);
}

TEST(SchedulerUnitTest, APauseStoredBeforeARestartIsHonoured) {
  net::io_context io;
  // What a restarted daemon passes in: the pause end it read back from the store.
  Scheduler s(io.get_executor(), SchedulerOptions{}, now_ms() + 200);
  std::vector<std::string> order;
  auto start = std::chrono::steady_clock::now();
  net::co_spawn(io, take(s, LoopType::code, false, "a", order, 1ms), net::detached);
  io.run();
  EXPECT_EQ(order.size(), 1u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 190ms);
}

TEST(SchedulerUnitTest, CancelWakesAWaiterWithAnEmptySlot) {
  net::io_context io;
  SchedulerOptions o;
  o.slots = 1;
  Scheduler s(io.get_executor(), o);
  std::vector<std::string> order;
  net::co_spawn(io, take(s, LoopType::code, false, "holder", order, 100ms), net::detached);
  net::co_spawn(io, take(s, LoopType::code, false, "victim", order, 1ms), net::detached);
  net::steady_timer t(io, 10ms);
  t.async_wait([&](auto) { s.cancel("victim"); });
  io.run();
  EXPECT_EQ(order, (std::vector<std::string>{"holder"}));
  EXPECT_EQ(s.stats().granted, 1u);
}

TEST(SchedulerUnitTest, RateLimitSpacesGrants) {
  net::io_context io;
  SchedulerOptions o;
  o.slots = 10;
  o.rate_limit = 3;
  o.rate_window = 200ms;
  Scheduler s(io.get_executor(), o);
  std::vector<std::string> order;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 7; ++i) net::co_spawn(io, take(s, LoopType::code, false, std::to_string(i), order, 1ms), net::detached);
  io.run();
  EXPECT_EQ(order.size(), 7u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 390ms);  // 3 + 3 + 1 across three windows
}
