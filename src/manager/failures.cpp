// A failed loop (tree_rules.hpp: after_failure). A code loop's first attempt gets a fresh second
// one: its worktree archived (commits kept on `loopr/archive/<id>`), a new worktree from the
// integration tip, a new iteration budget, the failure in its feedback. After that, or for any
// other type, the failure rolls up: its ancestors fail; the tree's other loops finish or are
// stopped (`on_failure`).
#include <spdlog/spdlog.h>

#include <algorithm>

#include <loopr/core/commit_message.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/engine/feedback.hpp>

#include "manager/driver.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {

using engine::first_line;

namespace {

// The fresh second attempt; false when it could not be made (the failure then rolls up).
awaitable<bool> retry_fresh(State s, const Loop& loop) {
  std::string kept;
  if (!loop.worktree.empty()) {
    std::string message =
        loop_commit_message(loop.id, "attempt 1 failed: " + first_line(loop.status_reason, 60));
    auto archive = [wt = s->worktrees, id = loop.id, message] { return wt.archive(id, message); };
    auto archived = co_await run_blocking(s->ctx.pool, archive);
    if (!archived) {
      spdlog::error("loop {}: cannot archive its worktree for a retry: {}", loop.id,
                    archived.error().message);
      co_return false;
    }
    kept = *archived;
  }
  std::shared_ptr<const Config> tree =
      co_await run_blocking(s->ctx.pool, [&] { return tree_config_of(*s, loop.plan_id); });
  const int budget = tree->loop(LoopType::code).max_iterations;
  auto stored =
      co_await s->journal.edit(loop.id, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
        if (!make_retry(l, kept, budget, w.events)) return not_allowed(l, "cannot retry");
        return std::nullopt;
      });
  if (!stored) co_return false;
  spawn_run(s, loop.id);
  co_return true;
}

// The ancestors of `id` in `tree`, nearest first.
std::vector<Loop> ancestors_of(const std::string& id, const std::vector<Loop>& tree) {
  std::vector<Loop> out;
  for (auto parent = parent_of_id(id); parent && !parent->empty(); parent = parent_of_id(*parent))
    for (const Loop& l : tree)
      if (l.id == *parent) out.push_back(l);
  return out;
}

}  // namespace

awaitable<void> on_failed(State s, std::string id) {
  auto guard = co_await s->plan_locks.lock(root_plan_id(id));
  auto loaded = co_await s->journal.load(id);
  if (!loaded || loaded->status != LoopStatus::failed) co_return;
  const Loop loop = std::move(*loaded);
  std::string baseline_failure;  // `baseline: warn`: the base failed, and the loops ran anyway
  if (loop.type == LoopType::code && loop.id != loop.plan_id)
    baseline_failure = (co_await load_baseline(*s, loop.plan_id)).fingerprint;
  const FailureStep step = after_failure(loop, baseline_failure);
  if (step == FailureStep::none) co_return;
  if (step == FailureStep::block_plan) {  // an integration fix loop (integration_gate.cpp)
    co_await block_after_fix(s, loop);
    co_return;
  }
  if (step == FailureStep::retry_fresh) {
    bool retried = co_await retry_fresh(s, loop);
    if (retried) co_return;
  }

  // Roll up (in one write with the failed loop's mark): ancestors without a run fail, running
  // ones are stopped with the reason.
  RollUp up;
  auto stored = co_await s->journal.edit_tree(
      loop.plan_id, [&](std::vector<Loop>& tree, WriteSet& w) -> std::optional<Error> {
        auto self =
            std::find_if(tree.begin(), tree.end(), [&](const Loop& l) { return l.id == id; });
        if (self == tree.end()) return make_error(ErrorCode::not_found, "no loop " + id);
        auto has_run = [&](const std::string& lid) { return s->runs.has(lid); };
        up = roll_up(*self, ancestors_of(id, tree), has_run, w.events);
        w.updates = up.updates;
        return std::nullopt;
      });
  if (!stored) spdlog::error("loop {}: rolling up its failure: {}", id, stored.error().message);
  for (const auto& rid : up.stop_runs)
    if (auto run = s->runs.find(rid)) s->runs.stop(*run, up.reason, EndReason::child_failed);

  if (s->ctx.config->on_failure == FailurePolicy::stop_siblings) {
    std::string why = "stopped: " + up.reason + " (on_failure: stop_siblings)";
    co_await stop_subtree(*s, loop.plan_id, loop.plan_id, why, EndReason::sibling_failed, false);
  }
}

awaitable<std::size_t> stop_subtree(ManagerState& s, std::string plan, std::string root,
                                    std::string why, EndReason end, bool include_root) {
  std::size_t acted = 0;
  co_await s.journal.edit_tree(
      plan, [&](std::vector<Loop>& tree, WriteSet& w) -> std::optional<Error> {
        acted = 0;
        for (Loop& l : tree) {
          if (!(is_descendant(l.id, root) || (include_root && l.id == root))) continue;
          if (is_terminal(l.status)) continue;
          auto run = s.runs.find(l.id);
          // A run that iterates writes its loop itself when it stops; a waiting one is woken now
          // (before the write, so it cannot start meanwhile) and its loop stored stopped here.
          if (run && s.runs.stop(*run, why, end)) {
            ++acted;
            continue;
          }
          if (engine::transition(l, LoopStatus::stopped, end, why, w.events)) {
            w.updates.push_back(l);
            ++acted;
          }
        }
        return std::nullopt;
      });
  co_return acted;
}

}  // namespace loopr::manager
