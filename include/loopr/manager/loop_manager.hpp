// The hierarchy (DESIGN.md "The hierarchy", "Git model"): turns completed loops into children,
// holds plans at the user's gate, invalidates the descendants of a loop that iterates again,
// merges completed loops into their plan's integration branch (and the finished tree into the
// base branch), has the other loops of the plan rebase at their next boundary, applies the
// failure policy, and on start picks up whatever a crash interrupted.
//
// Every decision here is plain code over the store and git; the model is never asked. All public
// coroutines run on the io thread of the EngineContext; blocking work goes to its pool.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <loopr/core/ids.hpp>
#include <loopr/engine/engine.hpp>
#include <loopr/forge/forge.hpp>
#include <loopr/manager/gc.hpp>

namespace loopr::manager {

/// What a user action answers. Errors: not_found (unknown id), illegal_transition (not allowed in
/// the loop's current state; the message says what is), invalid_argument (bad input).
using ActionResult = Result<Loop>;

/// A plan's integration branch merged into the base branch.
struct MergeInfo {
  std::string plan_id;
  std::string base_branch;
  std::string sha;
  int pr_number = 0;   ///< merge: pr: the pull request pushed / opened (then `sha` is its head)
  std::string pr_url;
  /// open, or merged: the team merged it on the forge (nothing pushed)
  PullRequestState pr_state = PullRequestState::none;
};

/// The repository's file system against `limits.min_free_space`.
struct DiskStatus {
  std::string dir;
  std::optional<std::uint64_t> free;  ///< bytes; nullopt: it could not be asked
  std::uint64_t floor = 0;            ///< limits.min_free_space (0: none)
  std::size_t paused = 0;             ///< loops paused with end_reason disk_full
  std::size_t resumed = 0;            ///< of them, resumed by this look

  bool full() const { return free && floor > 0 && *free < floor; }
};

class LoopManager {
 public:
  explicit LoopManager(engine::EngineContext& ctx);
  ~LoopManager();
  LoopManager(const LoopManager&) = delete;
  LoopManager& operator=(const LoopManager&) = delete;

  /// Crash recovery, once, before serving: loops that were running or pending run again from
  /// their last recorded iteration; completed loops whose merge or children were interrupted
  /// get them (idempotently: child ids come from the parent's id and the item's index); failed
  /// loops get the failure policy; worktrees of invalidated loops are archived.
  awaitable<Result<void>> start();

  /// A new plan loop for `request` (its integration branch and worktree made from the base branch).
  /// `dry_run`: the plan loop runs up to the gate, then ends `failed` with the reason `dry run`.
  /// `budget`: the request's own limits, kept with the plan for its whole tree (core/budget.hpp).
  awaitable<ActionResult> submit(std::string request, bool dry_run = false,
                                 RequestBudget budget = {});

  awaitable<ActionResult> approve(std::string id);
  awaitable<ActionResult> reject(std::string id, std::string reason);
  /// One more iteration with `feedback`. A plan that already has children invalidates them first.
  awaitable<ActionResult> iterate(std::string id, std::string feedback);
  /// Pause / resume / stop act on the loop and all its descendants.
  awaitable<ActionResult> pause(std::string id);
  /// `raised`: the tree's new caps (`resume --max-cost/--max-runtime`; zero fields: unchanged),
  /// stored with its plan before its loops go on; a cost cap not above what the tree spent is
  /// refused (invalid_argument).
  awaitable<ActionResult> resume(std::string id, RequestBudget raised = {});
  awaitable<ActionResult> stop(std::string id);
  /// Answers the question of a loop in `awaiting_answer` (it runs again with the answer in its
  /// next prompt); a paused loop that asked keeps the answer until it is resumed.
  awaitable<ActionResult> answer(std::string id, std::string text);
  /// Merges a complete plan's integration branch into the base branch (`merge: manual`, or a
  /// plan its integration gate blocked). An integration tip that fails the code validation (or
  /// changed since it was checked and fails now) is refused unless `force`.
  awaitable<Result<MergeInfo>> merge(std::string plan_id, bool force = false);

  /// `loopr iterate <plan> --from-pr` (merge: pr): the PR's review comments made since the last
  /// push become the feedback of a fix loop on the integration branch, whose work is pushed.
  awaitable<ActionResult> iterate_from_pr(std::string plan_id);
  /// The PR's review comments made since the last push (each: path, line, author, body).
  awaitable<Result<std::vector<forge::ReviewComment>>> pr_comments(std::string plan_id);
  /// merge: pr: a plan with an open PR is shown: its state asked of the forge in the
  /// background, at most once per forge.ci.poll_max (the next view shows the answer).
  void refresh_pr(std::string plan_id);
  /// merge: pr: the forge's token, handed over by the daemon after it took it out of its
  /// environment (never stored, logged or given to a command).
  void set_forge_token(std::string token);

  /// `loopr gc` (manager/gc.hpp): tree by tree under the tree lock, loops with a run left alone.
  awaitable<GcReport> gc(GcOptions options);

  /// A look at the repository's disk (`limits.min_free_space`): the loops paused for want of
  /// space (`disk_full`) go on once it is above the floor again. The daemon asks every few
  /// seconds; health and `daemon status` show the last answer.
  awaitable<DiskStatus> watch_disk();

  /// Graceful stop: no new runs; every run is stopped (model calls abandoned, tool and validation
  /// processes killed) and waited for up to `grace`; loops it stopped are stored `pending` so the
  /// next start resumes them.
  awaitable<void> shutdown(std::chrono::milliseconds grace,
                           std::chrono::milliseconds drain = std::chrono::milliseconds(0));
  /// A drain under way (`shutdown` with `drain`) ends now, as a shutdown without one.
  void cut_drain_short();
  /// A drained shutdown is under way.
  bool draining() const;

  /// Loops with a run in this process (iterating or waiting for a loop slot).
  std::size_t active_runs() const;
  /// Cost of a plan's whole tree (the engine's CostLedger; thread-safe).
  double tree_cost(const std::string& plan_id) const;
  /// Called when the config was reloaded (loop slots follow `concurrency.max_loops`).
  void config_changed();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The id arithmetic lives in core/ids.hpp now; these names stay for earlier callers.
using loopr::is_descendant;
using loopr::tree_sort_key;

}  // namespace loopr::manager
