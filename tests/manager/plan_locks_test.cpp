// One lock per plan (manager/plan_locks.hpp, issue 44 R4) on a real io_context: steps of one
// plan run one at a time in the order they asked, steps of another plan are not held by them,
// and a plan's entry is gone once no one holds or waits for its lock. The entry also counts the
// loop completions among them (what on_complete's tree check asks, in place of a map of its own).
#include "manager/plan_locks.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace loopr;
using namespace loopr::manager;

namespace {

/// `plan`'s lock, as a completion or not. (Not `co_await (completion ? … : …)`: g++ 12
/// destroys the temporary awaitable of a conditional expression twice.)
awaitable<PlanLocks::Guard> take(PlanLocks& locks, std::string plan, bool completion) {
  if (completion) co_return co_await locks.lock_for_completion(plan);
  co_return co_await locks.lock(plan);
}

/// Takes `plan`'s lock, notes `name`, and keeps the lock until `done` is set.
awaitable<void> step(PlanLocks& locks, std::string plan, std::string name,
                     std::vector<std::string>& order, AsyncEvent& done, bool completion = false) {
  auto guard = co_await take(locks, plan, completion);
  order.push_back(name);
  co_await done.wait_until(std::chrono::steady_clock::time_point::max());
}

/// Runs the io until `cond` holds (each handler ready now runs; nothing waits on a clock).
template <typename Cond>
bool run_until(net::io_context& io, Cond cond) {
  for (int i = 0; i < 1000 && !cond(); ++i) {
    io.restart();
    io.poll();
  }
  return cond();
}

}  // namespace

TEST(PlanLocksTest, AnotherPlansStepIsNotHeldByAStepThatHoldsItsOwnPlan) {
  net::io_context io;
  PlanLocks locks(io.get_executor());
  std::vector<std::string> order;
  AsyncEvent first_done(io.get_executor()), other_done(io.get_executor());
  net::co_spawn(io, step(locks, "001", "001 first", order, first_done), net::detached);
  net::co_spawn(io, step(locks, "002", "002", order, other_done), net::detached);
  ASSERT_TRUE(run_until(io, [&] { return order.size() == 2; }))
      << "002's step waited for 001's, which holds its lock";
  EXPECT_EQ(locks.size(), 2u);
  first_done.set();
  other_done.set();
  ASSERT_TRUE(run_until(io, [&] { return locks.size() == 0; }));
}

TEST(PlanLocksTest, StepsOfOnePlanRunOneAtATimeInTheOrderTheyAsked) {
  net::io_context io;
  PlanLocks locks(io.get_executor());
  std::vector<std::string> order;
  AsyncEvent a(io.get_executor()), b(io.get_executor()), c(io.get_executor());
  net::co_spawn(io, step(locks, "001", "a", order, a), net::detached);
  net::co_spawn(io, step(locks, "001", "b", order, b), net::detached);
  net::co_spawn(io, step(locks, "001", "c", order, c), net::detached);
  ASSERT_TRUE(run_until(io, [&] { return order.size() == 1; }));
  run_until(io, [] { return false; });  // every ready handler has run: b and c still wait
  EXPECT_EQ(order, (std::vector<std::string>{"a"}));
  EXPECT_EQ(locks.size(), 1u) << "one entry for the plan, held and waited for";
  a.set();
  ASSERT_TRUE(run_until(io, [&] { return order.size() == 2; }));
  EXPECT_EQ(order.back(), "b");
  b.set();
  ASSERT_TRUE(run_until(io, [&] { return order.size() == 3; }));
  EXPECT_EQ(order.back(), "c");
  c.set();
  ASSERT_TRUE(run_until(io, [&] { return locks.size() == 0; }))
      << "the plan's entry is dropped when no one holds or waits for its lock";
}

TEST(PlanLocksTest, ALockTakenAgainAfterItsEntryWasDroppedIsFree) {
  net::io_context io;
  PlanLocks locks(io.get_executor());
  int taken = 0;
  auto take = [](PlanLocks& l, int& n) -> awaitable<void> {
    auto guard = co_await l.lock("001");
    ++n;
  };
  net::co_spawn(io, take(locks, taken), net::detached);
  ASSERT_TRUE(run_until(io, [&] { return taken == 1 && locks.size() == 0; }));
  net::co_spawn(io, take(locks, taken), net::detached);
  ASSERT_TRUE(run_until(io, [&] { return taken == 2 && locks.size() == 0; }));
}

TEST(PlanLocksTest, ThePlansEntryCountsTheCompletionsThatHoldOrWaitForIt) {
  net::io_context io;
  PlanLocks locks(io.get_executor());
  std::vector<std::string> order;
  AsyncEvent first(io.get_executor()), second(io.get_executor()), other(io.get_executor());
  AsyncEvent merge(io.get_executor());
  net::co_spawn(io, step(locks, "001", "first", order, first, true), net::detached);
  net::co_spawn(io, step(locks, "001", "merge", order, merge), net::detached);
  net::co_spawn(io, step(locks, "001", "second", order, second, true), net::detached);
  net::co_spawn(io, step(locks, "002", "other", order, other, true), net::detached);
  ASSERT_TRUE(run_until(io, [&] { return order.size() == 2; }));
  EXPECT_EQ(locks.completions("001"), 2) << "the holder and the completion behind it; not merge";
  EXPECT_EQ(locks.completions("002"), 1);
  EXPECT_EQ(locks.completions("003"), 0);
  first.set();
  ASSERT_TRUE(run_until(io, [&] { return order.size() == 3; }));
  EXPECT_EQ(order.back(), "merge");
  EXPECT_EQ(locks.completions("001"), 1) << "the last completion of 001 checks the tree itself";
  merge.set();
  ASSERT_TRUE(run_until(io, [&] { return order.size() == 4; }));
  EXPECT_EQ(locks.completions("001"), 1);
  second.set();
  other.set();
  ASSERT_TRUE(run_until(io, [&] { return locks.size() == 0; }));
  EXPECT_EQ(locks.completions("001"), 0);
}
