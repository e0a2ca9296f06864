#include "manager/iteration_gate.hpp"

#include <loopr/api/events.hpp>
#include <loopr/git/branches.hpp>

#include "manager/driver.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {

using engine::IterationGate;

namespace {

// The run ends: the loop as stored (the write that failed or ended it decides).
awaitable<IterationGate::Verdict> stop_with(ManagerState& s, Result<Loop> stored, Loop fallback) {
  if (stored) co_return IterationGate::Verdict{false, std::move(*stored)};
  auto fresh = co_await s.journal.load(fallback.id);
  co_return IterationGate::Verdict{false, fresh ? std::move(*fresh) : std::move(fallback)};
}

}  // namespace

awaitable<IterationGate::Verdict> RebaseGate::before_iteration(Loop loop) {
  if (s_.draining) {
    // A drained stop: the iteration that just ended was the last; the loop runs again at the
    // next start (recovery runs what a drain stopped, also if the daemon dies before it exits).
    auto drained = co_await s_.journal.save_status(loop, LoopStatus::stopped,
                                                   EndReason::daemon_drained, kDrained);
    co_return co_await stop_with(s_, std::move(drained), std::move(loop));
  }
  if (loop.type == LoopType::plan) co_return Verdict{true, std::move(loop)};
  run_->control->take_integration_updated();
  const std::string integration = git::integration_branch(loop.plan_id);
  auto tip_of = [wt = s_.worktrees, plan = loop.plan_id] { return wt.integration_tip(plan); };
  auto tip = co_await run_blocking(s_.ctx.pool, tip_of);
  if (!tip || loop.tree.based_on == *tip) co_return Verdict{true, std::move(loop)};
  // Lazily (issue 32): only when what landed touches what this loop changed. Otherwise every
  // merge would move every sibling (a checkout of all that landed, per loop and iteration: the
  // O(loops) term of a big tree); the merge rebases and validates again when it conflicts.
  auto meets_of = [wt = s_.worktrees, loop] { return wt.integration_meets_work(loop); };
  auto meets = co_await run_blocking(s_.ctx.pool, meets_of);
  if (meets && !*meets) co_return Verdict{true, std::move(loop)};

  auto rebasing = co_await s_.journal.save_status(
      loop, LoopStatus::rebasing, EndReason::none, "the integration branch moved: rebasing onto " + integration);
  if (!rebasing) co_return co_await stop_with(s_, std::move(rebasing), std::move(loop));
  loop = std::move(*rebasing);
  auto rebase = [wt = s_.worktrees, loop] { return wt.rebase_onto_integration(loop); };
  auto outcome = co_await run_blocking(s_.ctx.pool, rebase);
  if (!outcome) {
    std::string why = "rebase onto " + integration + " failed: " + outcome.error().message;
    auto blocked = co_await s_.journal.save_status(loop, LoopStatus::blocked,
                                                   EndReason::rebase_conflict, why);
    co_return co_await stop_with(s_, std::move(blocked), std::move(loop));
  }
  using K = git::RebaseOutcome::Kind;
  if (outcome->kind == K::conflict || outcome->kind == K::local_changes) {
    loop.tree.conflicts = outcome->conflicts;
    std::string why = "rebasing onto " + integration + " conflicts in " +
                      join(outcome->conflicts, ", ") + " (resolve it in " + loop.worktree +
                      ", commit, then `loopr resume " + loop.id + "`)";
    std::vector<Event> events = {
        api::encode(loop.id, api::RebaseConflict{integration, outcome->conflicts})};
    auto blocked =
        co_await s_.journal.save_status(loop, LoopStatus::blocked, EndReason::rebase_conflict, why,
                                        std::move(events));
    co_return co_await stop_with(s_, std::move(blocked), std::move(loop));
  }
  loop.tree.based_on = *tip;
  loop.tree.conflicts.clear();
  std::vector<Event> events = {api::encode(
      loop.id,
      api::Rebased{integration, outcome->sha, std::string(git::to_string(outcome->kind))})};
  auto running = co_await s_.journal.save_status(loop, LoopStatus::running, EndReason::none, "",
                                                 std::move(events));
  if (!running) co_return co_await stop_with(s_, std::move(running), std::move(loop));
  co_return Verdict{true, std::move(*running)};
}

}  // namespace loopr::manager
