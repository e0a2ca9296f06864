// Why a loop stopped working, as one machine-readable word beside the human `status_reason`
// (Kubernetes' `reason` next to its `message`): scripts read `end_reason`, people read the text.
#pragma once

#include <optional>
#include <string_view>

namespace loopr {

enum class LoopStatus;

/// Set with every move to a status where the loop does not work on its own (complete, failed,
/// stopped, invalidated, blocked, paused); `none` while it works or waits at the gate or for an
/// answer. docs/architecture.md "End reasons" has the table; the spelling is `to_string`'s.
enum class EndReason {
  none,
  // complete
  validation_passed,  ///< its check passed (tests for code; the format check, + judge, else)
  completion_signal,  ///< no check configured: the model wrote the completion signal
  approved,           ///< a plan the person approved at the gate
  merged_by_user,     ///< a plan whose gate was red, merged by the person (`loopr merge`)
  children_complete,  ///< a loop failed only through a descendant, complete again with it
  // failed
  max_iterations,       ///< loops.<type>.max_iterations without passing
  no_progress,          ///< limits.no_progress_iterations with no change and the same failure
  same_failures,        ///< limits.max_same_failures failing validations, the same tests failing
  cost_limit,           ///< the tree's limits.max_cost_usd (or the request's --max-cost)
  loop_cost_limit,      ///< limits.max_loop_cost_usd
  runtime_limit,        ///< the tree's limits.max_runtime (or the request's --max-runtime)
  circuit_breaker,      ///< limits.circuit_breaker model calls in a row failed
  model_error,          ///< a model call failed in a way no retry fixes (e.g. 401, 400)
  model_refused,        ///< the model refused the task
  internal_error,       ///< loopr could not go on (worktree, prompt template, checkpoint, store)
  child_failed,         ///< a descendant failed for good (the roll-up)
  rejected,             ///< a plan the person rejected at the gate
  dry_run,              ///< `submit --dry-run`: the plan ends at the gate
  // stopped
  stopped_by_user,  ///< `loopr stop`
  sibling_failed,   ///< on_failure: stop_siblings, after another loop of the tree failed
  stop_pattern,     ///< limits.stop_on_patterns matched the validation output
  stop_script,      ///< a limits.stop_scripts command exited 0
  daemon_stopped,   ///< the daemon stopped while it ran: it runs again at the next start
  daemon_drained,   ///< `daemon stop --drain`: its iteration finished, no new one started
  // invalidated
  invalidated,  ///< an ancestor iterated: this generation is replaced
  superseded,   ///< a failed integration fix loop the person decided past
  // blocked
  rebase_conflict,      ///< rebasing onto the moved integration branch conflicts
  merge_conflict,       ///< merging into the integration branch conflicts
  integration_failed,   ///< the integration gate's check fails on the merged tip
  sandbox_unavailable,  ///< commands cannot run (no working sandbox or executor)
  baseline_failed,      ///< the tests fail on the base before any code loop ran
  setup_failed,         ///< a `setup:` command failed in the loop's new worktree
  held_for_review,      ///< the tree changes files a person must review before the merge
  ci_failed,            ///< merge: pr: the PR's CI fails after forge.ci.fix_iterations (or times out)
  forge_failed,         ///< merge: pr: pushing or the forge's API failed (`loopr merge` retries)
  // paused
  paused_by_user,      ///< `loopr pause`
  attended,            ///< attended: true, after an iteration
  validation_not_run,  ///< the check could not start (sandbox or cluster trouble)
  disk_full,           ///< below the free-space floor (or a write hit ENOSPC): resumes itself
  run_error,           ///< its run stopped on an exception (a bug): `loopr resume` tries again
  review_rejected,     ///< loops.review sent it back loops.review.max_rounds times; tests pass
  review_error,        ///< loops.review: the reviewer could not be asked; tests pass
  unknown,             ///< a reason a newer loopr stored, which this one does not know
};

const char* to_string(EndReason reason);
/// The enum of `to_string`'s spelling; nullopt for a word loopr does not know.
std::optional<EndReason> parse_end_reason(std::string_view text);

/// The statuses that carry an end reason (the rest clear it).
bool holds_end_reason(LoopStatus status);

/// Every value but `none` and `unknown`, in declaration order (for tables and tests).
inline constexpr EndReason kAllEndReasons[] = {
    EndReason::validation_passed,  EndReason::completion_signal, EndReason::approved,
    EndReason::merged_by_user,     EndReason::children_complete, EndReason::max_iterations,
    EndReason::no_progress,        EndReason::same_failures,     EndReason::cost_limit,        EndReason::loop_cost_limit,
    EndReason::runtime_limit,      EndReason::circuit_breaker,   EndReason::model_error,
    EndReason::model_refused,      EndReason::internal_error,    EndReason::child_failed,
    EndReason::rejected,           EndReason::dry_run,           EndReason::stopped_by_user,
    EndReason::sibling_failed,     EndReason::stop_pattern,      EndReason::stop_script,
    EndReason::daemon_stopped,     EndReason::daemon_drained,
    EndReason::invalidated,        EndReason::superseded,        EndReason::rebase_conflict,
    EndReason::merge_conflict,     EndReason::integration_failed, EndReason::sandbox_unavailable,
    EndReason::baseline_failed,    EndReason::setup_failed,      EndReason::held_for_review,   EndReason::ci_failed,
    EndReason::forge_failed,       EndReason::paused_by_user,    EndReason::attended,
    EndReason::validation_not_run, EndReason::disk_full,          EndReason::run_error,
    EndReason::review_rejected,    EndReason::review_error,
};

}  // namespace loopr
