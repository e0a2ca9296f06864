// The driver: the coroutines that carry out the tree's rules (tree_rules.hpp) with the journal
// (store, then events), the git work of loops (git::LoopWorktrees, on the pool) and the runs of
// this process. One file per responsibility:
//   runs.cpp            a run's life: slot, worktree, the engine, then what its end asks for
//   iteration_gate.cpp  the rebase at an iteration boundary (engine::IterationGate)
//   completion.cpp      a complete loop: merge into the integration branch, children, the tree
//   integration_gate.cpp the finished tree's tip checked before it is complete; the fix loop
//   failures.cpp        a failed loop: retry or roll up; stopping a subtree
//   user_actions.cpp    submit, approve, reject, iterate, pause, resume, stop, merge
//   questions.cpp       the answer to a loop's question (ask_user)
//   pull_request.cpp    merge: pr: held files, the push, the pull request, `loopr merge`'s retry
//   ci_watch.cpp        merge: pr: the PR's CI polled, CI fix loops, review comments back
//   pr_state.cpp        merge: pr: the PR's state (merged, closed) asked of the forge
//   recovery.cpp        start after a crash, graceful shutdown
// Everything runs on the io thread of the EngineContext; `plan_locks` orders the steps that
// change a tree's shape (completion, failure, iterate, merge), one plan at a time
// (plan_locks.hpp): the steps of other plans go on meanwhile.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <loopr/core/budget.hpp>
#include <loopr/engine/code_check.hpp>
#include <loopr/engine/engine.hpp>
#include <loopr/git/loop_worktrees.hpp>
#include <loopr/manager/baseline_state.hpp>
#include <loopr/manager/gc.hpp>
#include <loopr/manager/loop_manager.hpp>
#include <loopr/net/async.hpp>

#include "manager/plan_locks.hpp"
#include "manager/runs.hpp"

namespace loopr::manager {

struct ManagerState : std::enable_shared_from_this<ManagerState> {
  explicit ManagerState(engine::EngineContext& c)
      : ctx(c),
        journal(c.journal),
        worktrees(c.paths.root),
        runs(c.io.get_executor(), c.config->concurrency.max_loops),
        plan_locks(c.io.get_executor()),
        worktree_makers(c.io.get_executor(), kWorktreeMakers) {}

  /// Worktrees made at once (each is a checkout on the pool).
  static constexpr int kWorktreeMakers = 2;

  engine::EngineContext& ctx;
  engine::LoopJournal& journal;
  git::LoopWorktrees worktrees;  ///< blocking: use on ctx.pool
  RunTable runs;
  PlanLocks plan_locks;
  AsyncSemaphore worktree_makers;
  /// Loops the user paused: children spawned under them meanwhile start paused too.
  std::set<std::string> paused_roots;
  bool stopping = false;
  /// `daemon stop --drain`: the iterations in flight finish, none starts (iteration_gate.cpp).
  bool draining = false;
  /// Set when the daemon stops: an integration check under way ends.
  std::atomic<bool> gate_cancel{false};
  /// Plans whose baseline check is under way (baseline.cpp).
  std::set<std::string> baselines;
  /// Approved plans whose children wait for their baseline check: its end finishes them (the
  /// check's end reads no plan record to find out).
  std::set<std::string> baseline_waiters;
  /// merge: pr: the forge's token (taken from the daemon's environment at start; empty for a
  /// local remote) and the plans whose CI is being polled (ci_watch.cpp).
  std::string forge_token;
  std::set<std::string> ci_watches;
  /// When the forge was last asked about each plan's PR (pr_state.cpp: not once per view).
  std::map<std::string, std::int64_t> pr_asked_ms;

  bool under_paused_root(const std::string& id) const;
};

using State = std::shared_ptr<ManagerState>;

// runs.cpp
void spawn_run(const State& s, const std::string& id);
/// What the end of a run asks for, from the loop as the run left it.
awaitable<void> after_run(State s, Loop loop);
/// `after_run` for a loop read from the store (recovery, an approval).
awaitable<void> finish_loop(State s, std::string id);
/// Waits until every run in `runs` has ended, at most `limit`.
awaitable<void> wait_for_runs(std::vector<std::shared_ptr<Run>> runs,
                              std::chrono::milliseconds limit);

// completion.cpp
awaitable<void> on_complete(State s, std::string id);
awaitable<Result<MergeInfo>> merge_into_base(ManagerState& s, std::string plan_id);
/// `merge: auto`: merge_into_base, unless the tree changes held paths (core/protected_paths.hpp:
/// loopr's own files, the test harness, other tools' auto-run files): then the plan is blocked
/// with the paths and `loopr merge` decides.
awaitable<void> auto_merge_into_base(ManagerState& s, std::string plan_id);
/// The approved plan's text (what it names may change; completion.cpp), "" when unreadable.
awaitable<std::string> approved_plan_text(ManagerState& s, const std::string& plan);

// integration_gate.cpp
/// One run of the integration check on a plan's tip.
struct GateRun {
  std::string sha;    ///< the tip checked
  std::string error;  ///< the tip could not be checked out (git), else empty
  engine::CodeCheck check;
  std::string log;  ///< the full output's file, relative to the repository
};
awaitable<GateRun> run_gate(ManagerState& s, std::string plan_id);
/// Every loop of the tree is finished (its plan's lock held): check the tip unless it passed
/// already, then mark the tree complete (and merge), make a fix loop, or block the plan.
awaitable<void> check_integration(State s, std::string plan_id);
/// A person's `loopr merge` of a tip changed since its last check: the check now, stored;
/// true when it passed (a gate-blocked plan stays blocked either way).
awaitable<Result<bool>> check_tip_now(ManagerState& s, std::string plan_id);
/// The plan's fix loop failed for good: the plan is blocked with the check's output.
awaitable<void> block_after_fix(State s, Loop failed);
/// A gate-blocked plan back to complete (`result`: the gate mark to store, none to check it
/// again; `complete_tree`: the person merges it as it is); its failed fix loops are superseded.
awaitable<Result<Loop>> reopen_gate(ManagerState& s, std::string plan_id, GateResult result,
                                    std::string why, bool complete_tree);

// baseline.cpp
/// The plan's baseline check in the background, unless one runs or `baseline: off`: at submit,
/// at the gate, when its children wait for it. Its end stores the result and finishes an
/// approved plan (its children, or the block).
void start_baseline(const State& s, const std::string& plan_id);
/// Before an approved plan's children are made (its plan's lock held): true when the baseline
/// allows it; else a check is started or waited for, or the plan is stored blocked
/// (`baseline_failed`).
awaitable<bool> baseline_ready(State s, Loop& plan);
/// `resume` of a plan its baseline check blocked: the base branch merged into the integration
/// branch, the plan complete again, the check run again.
awaitable<ActionResult> resume_baseline(State s, Loop plan);
/// The plan's baseline state, read on the pool (baseline_state.hpp: kept apart from its record).
awaitable<BaselineState> load_baseline(ManagerState& s, std::string plan_id);

// failures.cpp
awaitable<void> on_failed(State s, std::string id);
/// Stops `root` and its descendants (with `include_root` false only the descendants): runs are
/// asked to stop, loops waiting to run are stored `stopped` at once. How many were acted on.
awaitable<std::size_t> stop_subtree(ManagerState& s, std::string plan_id, std::string root,
                                    std::string why, EndReason end, bool include_root);

// disk_step.cpp
/// LoopManager::watch_disk: resumes the loops paused with `disk_full` once there is space.
awaitable<DiskStatus> watch_disk(State s);

// user_actions.cpp
awaitable<ActionResult> submit(State s, std::string request, bool dry_run, RequestBudget budget);
/// The config `plan_id`'s tree works under: the request's own limits in place of the file's
/// (core/budget.hpp). Blocking (one store read): call it on the pool.
std::shared_ptr<const Config> tree_config_of(ManagerState& s, const std::string& plan_id);
/// The same for `loop`'s tree; no read when `loop` is the plan itself (its record has the budget).
std::shared_ptr<const Config> tree_config_of(ManagerState& s, const Loop& loop);
/// A dry run's plan reached the gate: it ends `failed` with the reason `dry run`.
awaitable<void> end_dry_run(State s, std::string id);
awaitable<ActionResult> decide(State s, std::string id, bool approve, std::string reason);
awaitable<ActionResult> iterate(State s, std::string id, std::string feedback);
awaitable<ActionResult> pause(State s, std::string id);
awaitable<ActionResult> resume(State s, std::string id, RequestBudget raised = {});
awaitable<ActionResult> stop(State s, std::string id);
awaitable<Result<MergeInfo>> merge(State s, std::string plan_id, bool force);

// forecast_step.cpp
/// Makes and stores the forecast of a plan that reached the gate, and notes a `forecast` event.
awaitable<void> forecast_at_gate(State s, Loop plan);

// questions.cpp
/// Answers a loop's question (`ask_user`): awaiting_answer → pending (run now), or stored for a
/// paused loop that asked.
awaitable<ActionResult> answer(State s, std::string id, std::string text);

// gc_step.cpp
/// `loopr gc` in the daemon: tree by tree under each plan's lock; loops with a run are left alone.
awaitable<GcReport> gc(State s, GcOptions options);

// recovery.cpp
awaitable<Result<void>> start(State s);
/// `drain` > 0: first the runs' iterations in flight finish (none starts) for at most `drain`.
awaitable<void> shutdown(State s, std::chrono::milliseconds grace,
                         std::chrono::milliseconds drain = std::chrono::milliseconds(0));
/// A drain under way ends now: what still runs is stopped as in a shutdown without a drain.
void cut_drain_short(ManagerState& s);
/// The status reason of a loop a drain stopped at its iteration boundary.
inline constexpr const char* kDrained =
    "the daemon stopped after its iteration (a drained stop); it runs again at the next start";

/// An illegal_transition error naming the loop's status and what was refused.
Error not_allowed(const Loop& loop, const std::string& what);

// plan_logs.cpp
/// Writes a check's whole output next to the plan's loop logs,
/// `.loopr/logs/loops/<plan>/<kind>-<sha12>.log` (kind: `baseline`, `integration`), and returns
/// that path relative to the repository; a failed write is logged, not fatal.
std::string write_plan_log(const RepoPaths& paths, const std::string& plan, const std::string& kind,
                           const std::string& sha, const std::string& text);

}  // namespace loopr::manager
