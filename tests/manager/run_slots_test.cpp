// Loop slots (`concurrency.max_loops`) on a real io_context: loops closer to code get a free
// slot first, in the order they asked among equals (issue 18: a tree finishes its code loops
// before it starts more specs, and the worktrees in use stay few).
#include <gtest/gtest.h>

#include "manager/runs.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace std::chrono_literals;

namespace {

awaitable<void> take(RunTable& runs, std::shared_ptr<Run> run, std::vector<std::string>& order,
                     std::chrono::milliseconds hold) {
  bool granted = co_await runs.slots().acquire(run->slot);
  if (!granted) co_return;
  order.push_back(run->id);
  net::steady_timer t(co_await net::this_coro::executor, hold);
  co_await t.async_wait(net::use_awaitable);
  runs.slots().release();
}

}  // namespace

TEST(RunSlotsTest, CodeLoopsGetAFreeSlotFirstThenPhasesSpecsAndPlansInTheOrderTheyAsked) {
  net::io_context io;
  RunTable runs(io.get_executor(), 1);
  std::vector<std::string> order;
  for (const char* id : {"001", "002", "001-001", "001-001-001", "code-001-001-001", "001-002",
                         "code-001-001-002", "fix-001-001", "001-001-002"})
    net::co_spawn(io, take(runs, runs.add(id), order, 2ms), net::detached);
  io.run();
  // "001" took the only slot before anyone waited; fix loops are code loops.
  EXPECT_EQ(order,
            (std::vector<std::string>{"001", "code-001-001-001", "code-001-001-002", "fix-001-001",
                                      "001-001-001", "001-001-002", "001-001", "001-002", "002"}));
}

TEST(RunSlotsTest, ACancelledWaiterIsSkippedAndItsPlaceGoesToTheNext) {
  net::io_context io;
  RunTable runs(io.get_executor(), 1);
  std::vector<std::string> order;
  auto holder = runs.add("001");
  auto cancelled = runs.add("code-001-001-001");
  auto next = runs.add("001-001");
  net::co_spawn(io, take(runs, holder, order, 5ms), net::detached);
  net::co_spawn(io, take(runs, cancelled, order, 1ms), net::detached);
  net::co_spawn(io, take(runs, next, order, 1ms), net::detached);
  net::post(io, [&] { runs.stop(*cancelled, "stopped while waiting", loopr::EndReason::stopped_by_user); });
  io.run();
  EXPECT_EQ(order, (std::vector<std::string>{"001", "001-001"}));
}
