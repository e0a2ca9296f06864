// Start after a crash (or a clean stop) and the graceful shutdown. Crash safety rests on two
// facts: every state change is ONE store write made before its events are published, and every
// step of the tree is idempotent (child ids from the parent's id and the index; a merge made
// before is up to date). So a start only has to redo what the records say is unfinished
// (tree_rules.hpp: plan_recovery), after clearing what git work a kill cut short.
#include <spdlog/spdlog.h>

#include <loopr/core/commit_message.hpp>

#include "manager/driver.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {
namespace {

constexpr const char* kDaemonStopping = "the daemon is stopping";

// A loop a stop of the daemon ended (drained or not), to be run again at the next start.
bool stopped_by_the_daemon(const Loop& l) {
  return l.status == LoopStatus::stopped &&
         (l.end_reason == EndReason::daemon_stopped || l.end_reason == EndReason::daemon_drained);
}

// Lets the iterations in flight finish and starts none (the gate stops each loop at its next
// boundary: iteration_gate.cpp), for at most `limit`. Runs still waiting for a loop slot never
// start; their loops stay pending.
awaitable<void> drain(State s, std::chrono::milliseconds limit) {
  s->draining = true;
  std::vector<std::shared_ptr<Run>> all = s->runs.all();
  std::size_t waiting = 0;
  for (auto& run : all)
    if (!run->slot->granted && !s->runs.stop(*run, kDrained, EndReason::daemon_drained,
                                             engine::StopCause::daemon_stopping))
      ++waiting;
  spdlog::info("draining: {} runs finish their iteration (at most {}), {} waiting never start",
               all.size() - waiting, format_duration(limit), waiting);
  co_await wait_for_runs(all, limit);
  if (s->runs.size() > 0)
    spdlog::warn("draining: {} runs still in their iteration after {}: stopping them",
                 s->runs.size(), format_duration(limit));
}

}  // namespace

void cut_drain_short(ManagerState& s) {
  if (!s.draining) return;
  spdlog::info("draining cut short: the runs still in their iteration are stopped");
  for (auto& run : s.runs.all())
    s.runs.stop(*run, kDaemonStopping, EndReason::daemon_stopped,
                engine::StopCause::daemon_stopping);
}

awaitable<Result<void>> start(State s) {
  // Every loop's summary (the store's summary index, read into memory here, before the API
  // serves: health and listings count and copy them from then on). What recovery decides needs
  // no more: status, type, tree marks, worktree, branch, usage (tree_rules.hpp: plan_recovery).
  auto summaries = [&store = s->journal.store()] { return store.list_loop_summaries(); };
  auto all = co_await run_blocking(s->ctx.pool, summaries);
  if (!all) co_return all.take_error();
  // Loops the last daemon stopped and did not store pending again (it died first): they run
  // again, as its stop promised. The record is read whole (a summary has no progress or run
  // marks, and what is saved is the record).
  for (Loop& l : *all) {
    if (!stopped_by_the_daemon(l)) continue;
    auto record = co_await s->journal.load(l.id);
    if (!record) continue;
    auto requeued =
        co_await s->journal.save_status(std::move(*record), LoopStatus::pending, EndReason::none,
                                        "the daemon stopped; it resumes at this start");
    if (requeued) l = std::move(*requeued);
  }
  s->ctx.costs.reset(*all);
  RecoveryPlan plan = plan_recovery(*all, s->ctx.config->merge);

  // On the pool: git's stale locks and stray folders; which invalidated loops still have a
  // worktree folder to archive.
  std::map<std::string, std::string> recorded;  // loop id → the worktree it had
  for (const Loop& l : *all)
    if (l.status == LoopStatus::invalidated) recorded[l.id] = l.tree.invalidated_worktree;
  std::vector<std::pair<std::string, std::string>> archive_candidates;  // worktree, loop id
  for (const auto& id : plan.archive) archive_candidates.emplace_back(recorded[id], id);
  auto sweep = [wt = s->worktrees, interrupted = std::move(plan.interrupted),
                folders = plan.may_have_folder, archive_candidates] {
    if (auto cleared = wt.clear_locks(interrupted); !cleared)
      spdlog::warn("recovery: clearing git locks: {}", cleared.error().message);
    if (auto strays = wt.set_aside_strays(folders); !strays)
      spdlog::warn("recovery: setting stray worktree folders aside: {}", strays.error().message);
    std::vector<std::string> to_archive;
    for (const auto& [worktree, id] : archive_candidates)
      if (wt.folder_exists(worktree)) to_archive.push_back(id);
    return to_archive;
  };
  std::vector<std::string> to_archive = co_await run_blocking(s->ctx.pool, sweep);
  spdlog::info("recovery: {} loops in the store; {} to run, {} to finish, {} worktrees to archive",
               all->size(), plan.run.size(), plan.finish.size(), to_archive.size());
  for (const auto& id : to_archive) {
    auto archive = [wt = s->worktrees, id] {
      return wt.archive(id, loop_commit_message(id, "invalidated"));
    };
    auto done = co_await run_blocking(s->ctx.pool, archive);
    if (!done) spdlog::warn("loop {}: archiving its worktree: {}", id, done.error().message);
  }
  for (const auto& id : plan.finish) co_await finish_loop(s, id);
  for (const auto& id : plan.run) spawn_run(s, id);
  // A baseline check a kill cut short runs again (an approved plan's children wait for it).
  auto checking = [&store = s->journal.store()] {
    std::vector<std::string> plans;
    auto states = store.meta_with_prefix(baseline_state_key(""));
    if (!states) return plans;
    for (const auto& [key, value] : *states) {
      std::string plan = key.substr(baseline_state_key("").size());
      auto state = baseline_state_from_json(nlohmann::json::parse(value, nullptr, false));
      if (state.result == BaselineResult::checking && store.get_loop(plan)) plans.push_back(std::move(plan));
    }
    return plans;
  };
  for (const auto& id : co_await run_blocking(s->ctx.pool, checking)) start_baseline(s, id);
  co_return ok();
}

awaitable<void> shutdown(State s, std::chrono::milliseconds grace,
                         std::chrono::milliseconds drain_limit) {
  s->stopping = true;  // no run starts, no completion is carried out (the next start does)
  std::vector<std::shared_ptr<Run>> every = s->runs.all();
  if (drain_limit.count() > 0) co_await drain(s, drain_limit);
  s->gate_cancel = true;
  std::vector<std::shared_ptr<Run>> all = s->runs.all();
  for (auto& run : all)
    s->runs.stop(*run, kDaemonStopping, EndReason::daemon_stopped,
                 engine::StopCause::daemon_stopping);
  auto deadline = std::chrono::steady_clock::now() + grace;
  co_await wait_for_runs(all, grace * 3 / 4);
  // Loops the shutdown stopped run again at the next start. What their interrupted iteration
  // had written is checkpointed first (while time is left; otherwise it stays in the worktree).
  WriteSet set;
  std::vector<std::pair<std::string, std::string>> to_checkpoint;  // worktree, loop id
  for (auto& run : every) {
    auto l = co_await s->journal.load(run->id);
    // Stopped by this shutdown or its drain (not by a stop pattern, a person, … that ended it
    // meanwhile).
    if (!l || l->status != LoopStatus::stopped) continue;
    const bool drained = l->end_reason == EndReason::daemon_drained;
    if (!drained && (run->control->stop_cause() != engine::StopCause::daemon_stopping ||
                     l->status_reason != run->control->stop_reason()))
      continue;
    Loop loop = std::move(*l);
    // A drained loop's iteration ended with its checkpoint; one stopped mid-iteration has work
    // in progress to commit.
    if (!drained && !loop.worktree.empty()) to_checkpoint.emplace_back(loop.worktree, loop.id);
    if (engine::transition(loop, LoopStatus::pending, EndReason::none,
                           "the daemon stopped; it resumes at the next start", set.events))
      set.updates.push_back(loop);
  }
  if (!set.updates.empty()) {
    auto stored = co_await s->journal.commit(std::move(set));
    if (!stored)
      spdlog::error("shutdown: storing stopped loops as pending: {}", stored.error().message);
  }
  auto checkpoint = [wt = s->worktrees, to_checkpoint, deadline] {
    std::size_t done = 0;
    for (const auto& [worktree, id] : to_checkpoint) {
      if (std::chrono::steady_clock::now() >= deadline) break;
      if (wt.checkpoint(worktree,
                        loop_commit_message(id, "work in progress when the daemon stopped")))
        ++done;
    }
    return done;
  };
  std::size_t checkpointed = co_await run_blocking(s->ctx.pool, checkpoint);
  spdlog::info("shutdown: {} of {} stopped loops checkpointed", checkpointed, to_checkpoint.size());
}

}  // namespace loopr::manager
