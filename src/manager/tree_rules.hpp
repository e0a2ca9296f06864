// The tree's rules, as plain functions over loop records: which children an artifact asks for,
// where a tree stands, what a restarted daemon must finish, what follows a failure, and what
// invalidating a parent's descendants changes. No coroutine, store, git or clock of its own, and
// no header of the engine, git or the store (CMakeLists.txt compiles them with only core, api and
// markdown to be sure):
// the driver (the rest of this folder) loads the records, asks these, and carries the answer
// out. src/manager/README.md explains the rules; tests/manager/ checks each of them.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/core/event.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/manager/baseline_state.hpp>
#include <loopr/manager/owed_steps.hpp>
#include <loopr/manager/tree_verdict.hpp>

namespace loopr::manager {

// ---------------------------------------------------------------- children

/// A new plan loop `id` for `request` (pending; its tree's base branch taken from `config`).
Loop make_plan_loop(const std::string& id, const std::string& request, const Config& config);

/// The children a completed plan, spec or phase asks for in its artifact `text` (the items of
/// `## Specs to Create`, `## Phases`, or the phase's one code loop), not yet stored. A child's id
/// is the parent's id and `children_base` + the item's index: asking again gives the same ids,
/// and a parent's next generation never reuses an earlier one's.
Result<std::vector<Loop>> children_from_artifact(const Loop& parent, std::string_view text,
                                                 const Config& config);

// ---------------------------------------------------------------- what a loop is still owed

/// A complete loop whose current iteration is merged into the integration branch.
bool merged(const Loop& loop);
/// A complete loop whose current iteration's children exist (a code loop has none to make).
bool spawned(const Loop& loop);
/// Complete, merged and spawned: the manager owes it nothing more.
bool finished(const Loop& loop);
/// A failed loop the failure policy has not handled yet (no retry, no roll-up, not rejected).
bool failure_pending(const Loop& loop);

// ---------------------------------------------------------------- the tree
// (tree_verdict: include/loopr/manager/tree_verdict.hpp)

/// What the tree needs after one of its loops finished: the plan's `check_gate` or
/// `merge_into_base` of owed_steps (owed_steps.hpp).
enum class TreeStep {
  none,               ///< not every loop is finished, or nothing is left to do
  check_integration,  ///< every loop finished: check the integration tip (the gate), then
                      ///< store `tree_complete` when it passes (and merge, with merge: auto)
  merge_into_base,    ///< complete and not merged yet (merge: auto)
};
TreeStep next_tree_step(std::span<const Loop> tree, std::string_view plan_id, MergeMode mode);

// ---------------------------------------------------------------- the integration gate

/// The plan was blocked by its integration gate (a person decides: resume, merge, iterate).
bool gate_blocked(const Loop& plan);
/// Whether a failing integration tip gets a fix loop now (one per generation of the tree and
/// per resume), or the plan is blocked.
bool may_make_fix_loop(const Loop& plan);
/// The number the plan's next fix loop takes (`fix-<plan>-NNN`): past every one made before.
int next_fix_number(std::span<const Loop> tree, const std::string& plan_id);
/// The integration fix loop `number` of `plan` after the gate's check failed: a code loop on the
/// integration branch (its worktree and branch from the tip) with `integration.max_fix_iterations`,
/// whose first prompt carries what failed (`check_feedback`) and the loops merged (`merged`).
Loop make_fix_loop(const Loop& plan, int number, const std::string& check_summary,
                   const std::string& check_feedback, const std::vector<std::string>& merged,
                   const Config& config);
/// The end of a check's output kept in the plan's record (the whole of it is in the log file).
std::string gate_output_tail(const std::string& output);

// ---------------------------------------------------------------- the baseline check

/// What a plan's children wait for: the baseline check (the project's setup and tests on the
/// integration branch before any code loop, started at submit).
enum class BaselineStep {
  proceed,  ///< passed, not asked for (`baseline: off`), failed under `baseline: warn`, or
            ///< could not run at all (the sandbox or cluster: the loops meet that themselves)
  check,    ///< no result and no check under way: start one
  wait,     ///< a check is under way: its end finishes the plan
  block,    ///< failed under `baseline: block`: the plan is blocked before any code loop
};
/// `running`: a check of this plan is under way in this process.
BaselineStep baseline_step(const BaselineState& baseline, BaselineMode mode, bool running);
/// The plan was blocked by its baseline check (a person fixes the base, then resumes).
bool baseline_blocked(const Loop& plan);
/// The status reason of a plan its baseline check blocked: the summary, the end of the output
/// and what to do.
std::string baseline_block_reason(const BaselineState& baseline, const std::string& plan_id,
                                  const std::string& base_branch);
/// Where a check's result is kept for other plans on the same commit with the same settings:
/// `baseline/<sha>/<fingerprint of the validation, setup, sandbox paths and environment>`.
std::string baseline_meta_key(const std::string& sha, const Config& config);

// ---------------------------------------------------------------- after a crash

/// What a starting daemon does with the loops in the store: each loop that owes a step
/// (owed_steps.hpp) is run, finished or archived.
struct RecoveryPlan {
  std::vector<std::string> run;      ///< running, rebasing or pending: run again from the record
  std::vector<std::string> finish;   ///< complete with a step owed, or a failure not handled
  std::vector<std::string> archive;  ///< invalidated, with the worktree they had recorded
  /// Loops that may have a worktree folder; other folders git does not know are set aside.
  std::set<std::string> may_have_folder;
  /// The loops above: what a killed daemon may have been changing (their git locks are stale).
  std::vector<Loop> interrupted;
};
RecoveryPlan plan_recovery(std::span<const Loop> all, MergeMode mode);

// ---------------------------------------------------------------- after a failure

enum class FailureStep {
  none,         ///< handled already, or a plan the user rejected
  retry_fresh,  ///< a code loop's first attempt: a fresh second one
  roll_up,      ///< its ancestors fail with it (and siblings finish or stop: on_failure)
  block_plan,   ///< an integration fix loop: its plan is blocked with the check's output
};
/// `baseline_failure`: the fingerprint of the failure its plan's baseline check saw (empty: it
/// passed): a code loop that fails the same way fails for a reason no change of its own fixed,
/// so it gets no fresh retry.
FailureStep after_failure(const Loop& failed, const std::string& baseline_failure = {});

/// Turns a failed first attempt into the fresh second one: pending, new worktree and branch
/// from the integration tip, `max_iterations` more iterations, run marks reset, the failure in
/// its feedback (`kept`: the branch with the first attempt's commits, or empty).
Result<void> make_retry(Loop& loop, const std::string& kept, int max_iterations,
                        std::vector<Event>& events);

/// What rolling a failure up changes: ancestors without a run fail (and are marked handled);
/// ancestors with a run are to be stopped with `reason`; the failed loop is marked handled.
struct RollUp {
  std::string reason;
  std::vector<Loop> updates;           ///< the failed loop and the ancestors that fail now
  std::vector<std::string> stop_runs;  ///< ancestors whose runs must stop
};
RollUp roll_up(Loop failed, std::span<const Loop> ancestors,
               const std::function<bool(const std::string&)>& has_run, std::vector<Event>& events);

// ---------------------------------------------------------------- invalidation

/// `parent` iterates again after it had children: its descendants become `invalidated` (their
/// worktrees to be archived, artifacts and branches kept), its children_base moves past every
/// index used, its tree marks for the old generation go, the user's feedback is added, and it
/// moves to `next`. The caller stores the whole change in one write.
struct Invalidation {
  std::vector<Loop> updates;            ///< the parent and every newly invalidated descendant
  std::vector<Event> events;            ///< their status changes and the `approval` event
  std::optional<Approval> approval;     ///< a plan's `iterate` decision, kept with the plan
  std::vector<std::string> to_archive;  ///< descendants that had a worktree
};
Result<Invalidation> invalidate_descendants(const std::string& parent_id,
                                            std::span<const Loop> tree, const std::string& feedback,
                                            LoopStatus next);

/// The person iterates `id` (not a plan) again: its ancestors that failed only because a failure
/// in `id`'s subtree rolled up to them are `complete` again (their work and children stand), so
/// the tree completes when `id`'s subtree does. An ancestor that another failed loop (outside
/// `id`'s subtree) still holds down stays failed, and so does one that is owed a step.
std::vector<Loop> restore_ancestors(const std::string& id, std::span<const Loop> tree,
                                    std::vector<Event>& events);

// ---------------------------------------------------------------- small helpers

/// `id` is `root` or below it.
bool in_subtree(const std::string& id, const std::string& root);
/// `items` joined with `separator` (`a, b, c`).
std::string join(const std::vector<std::string>& items, const std::string& separator);

}  // namespace loopr::manager
