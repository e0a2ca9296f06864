// What a loop carries besides its fields: the marks the manager writes about the loop's place in
// its tree (merged, spawned, retried, …) and the marks the engine writes about its run (errors in
// a row, iterations without progress, the feedback for the next prompt). Typed here; stored in
// the record's `"context"` object under the key names every earlier loopr wrote, by ONE codec
// (`to_store_json` / `loop_from_store_json` in loop.cpp), so stores load without a migration.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopr {

/// A request's own limits (`loopr submit --max-cost USD --max-runtime D --max-iterations N`),
/// kept with its plan; they replace the config's limits for that plan's tree (core/budget.hpp).
struct RequestBudget {
  double max_cost_usd = 0;                 ///< replaces limits.max_cost_usd; 0: the config's
  std::chrono::milliseconds max_runtime{0};  ///< replaces limits.max_runtime; 0: the config's
  int max_iterations = 0;  ///< replaces every loops.<type>.max_iterations; 0: the config's

  bool any() const { return max_cost_usd > 0 || max_runtime.count() > 0 || max_iterations > 0; }
  bool operator==(const RequestBudget&) const = default;
};

/// One entry of the feedback a loop carries from one fresh-context iteration to the next.
/// Who left a feedback entry: the loop's own check (`validation` for code, `format check` for
/// the others), the protection of files, a reviewer, the person, the engine's retry, the
/// integration gate, a rebase at merge time, the forge's CI.
enum class FeedbackSource {
  validation,
  format_check,
  protected_files,
  review,
  user,
  engine,
  integration,
  rebase,
  ci
};
/// The stored word (`format check` …), also the prompt's; any other word reads as `engine`.
const char* to_string(FeedbackSource source);
FeedbackSource parse_feedback_source(std::string_view text);

struct FeedbackEntry {
  int iteration = 0;  ///< 0 for feedback from the user (`loopr iterate --feedback`)
  FeedbackSource source = FeedbackSource::engine;
  std::string summary;  ///< one line
  std::string text;     ///< the full feedback (validation output tail, problems …)

  bool operator==(const FeedbackEntry&) const = default;
};

/// A plan's integration gate: none yet, checking, or what its last check of the integration tip
/// came to (`forced`: the person merged past a failing one). Stored as its text ("" for none).
enum class GateResult { none, checking, passed, failed, forced };
const char* to_string(GateResult result);
GateResult parse_gate_result(std::string_view text);  ///< none for any other text

/// `merge: pr`: the pull request's CI as loopr last saw it (`skipped`: `ci.wait: false`).
enum class PrChecks { none, pending, passed, failed, skipped };
const char* to_string(PrChecks checks);
PrChecks parse_pr_checks(std::string_view text);  ///< none for any other text

/// `merge: pr`: the pull request as the forge said last (none: no PR yet). The forge's own words
/// (GitHub's `state`/`merged`, GitLab's `opened`/`locked`/…) become one of these where they are
/// read (src/forge); stored and sent as "open", "closed", "merged" ("" for none).
enum class PullRequestState { none, open, closed, merged };
const char* to_string(PullRequestState state);
PullRequestState parse_pull_request_state(std::string_view text);  ///< none for any other text
/// The team merged or closed it on the forge: loopr waits for nothing more of it.
constexpr bool ended(PullRequestState state) {
  return state == PullRequestState::merged || state == PullRequestState::closed;
}

/// Written by the manager only: where the loop stands in its tree. Integration branch =
/// `loopr/<plan>`; "generation" = the children spawned from one iteration of a parent.
struct TreeMarks {
  /// The iteration whose work was merged into the integration branch (`merged_iteration`).
  std::optional<int> merged_iteration;
  std::string merged_sha;  ///< the integration tip that merge made (`merged_sha`)
  /// The integration tip this loop's branch is built on; the iteration gate rebases when the tip
  /// moved away from it (`based_on`).
  std::string based_on;
  /// The iteration whose artifact's children were created (`spawned_iteration`).
  std::optional<int> spawned_iteration;
  /// Index offset of the current generation of children: a parent that iterates again after it
  /// had children moves it past every index used, so fresh children never reuse an id.
  int children_base = 0;
  /// Plans: the generation the integration branch was last rebuilt for (`integration_generation`).
  std::optional<int> integration_generation;
  std::vector<std::string> conflicts;  ///< paths of the rebase/merge conflict that blocked it
  int attempt = 1;                     ///< 2: a failed code loop's fresh second attempt
  bool rolled_up = false;              ///< its failure was handled (retry or roll-up done)
  bool user_rejected = false;          ///< a plan the user rejected (no failure policy)
  std::string invalidated_worktree;    ///< the worktree it had when it was invalidated
  // Plans only.
  std::string base_branch;       ///< where the tree is merged (taken from the config at submit)
  bool tree_complete = false;    ///< every loop of the tree complete and merged
  std::string merged_into_base;  ///< the base tip after the tree was merged into it
  std::string merge_error;       ///< why the merge into the base branch was not made
  // Plans only: the integration gate (the code validation on the integration tip).
  std::string gate_sha;      ///< the integration tip the gate checked last (`gate_sha`)
  GateResult gate_result = GateResult::none;
  std::string gate_summary;  ///< one line: what the check said
  std::string gate_output;   ///< the end of what the check printed (a few KiB)
  std::string gate_log;      ///< the full output, relative to the repository root
  int gate_fixes = 0;        ///< fix loops made since the tree's generation began or a resume
  bool dry_run = false;      ///< `submit --dry-run`: the plan ends at the gate, `failed`
  /// When the tree's `limits.max_runtime` started counting (ms since the epoch; 0: the plan's
  /// `created_at`): the last approval, or the last time the person sent the plan back to work.
  /// The wait at the gate is the person's time, not the tree's.
  std::int64_t runtime_from = 0;
  /// Plans only: the request's own limits (`submit --max-cost/--max-runtime/--max-iterations`).
  RequestBudget budget;
  // Plans only, `merge: pr`: the pull request of the integration branch and its CI.
  int pr_number = 0;          ///< 0: none opened yet
  std::string pr_url;         ///< the PR's web address
  PullRequestState pr_state = PullRequestState::none;
  PrChecks pr_checks = PrChecks::none;
  std::string pr_head;        ///< the commit pushed last (`loopr/<plan>` on the remote)
  std::int64_t pr_pushed_at = 0;  ///< ms since the epoch: review comments after it are new
  std::string pr_failing;     ///< the failing checks, one line (names and titles)
  std::string pr_error;       ///< what failed pushing or talking to the forge, and the retry
  int ci_fixes = 0;           ///< CI fix loops made for this PR

  bool operator==(const TreeMarks&) const = default;
};

/// Written by the engine only (and by the manager when it resets a loop for a fresh run).
struct RunMarks {
  int consecutive_errors = 0;           ///< failed model calls in a row (circuit breaker)
  int no_progress = 0;                  ///< iterations in a row with no diff and the same failure
  std::string last_error;               ///< the last model error
  std::string last_validation_hash;     ///< hash of the last validation output
  int same_failures = 0;                ///< failing validations in a row, the same tests failing
  std::string last_failing;             ///< the fingerprint of the last failing tests (or output)
  std::string head;                     ///< the worktree's HEAD after the last checkpoint
  std::vector<FeedbackEntry> feedback;  ///< oldest first, bounded (engine/feedback.hpp)
  /// The loop's question to the person (`ask_user`), kept until its answer was in a prompt.
  std::string question;
  std::string answer;  ///< the person's answer (`loopr answer`), shown in the next prompt
  /// `attended: true`: the iteration that passed and waits (paused) for the person before the
  /// loop completes; `resume` completes it, `iterate` sends it back to work. 0: none. (Also a
  /// code loop whose tests pass but whose review failed loops.review.max_rounds times, or could
  /// not be asked: the person decides the same way.)
  int attended_passed = 0;
  /// loops.review: the reviews that sent this loop back since it last waited for the person.
  int review_rounds = 0;

  bool operator==(const RunMarks&) const = default;
};

/// Appends one entry to `marks.feedback`, keeping at most `max_entries` (the oldest go first).
void add_feedback(RunMarks& marks, FeedbackEntry entry, std::size_t max_entries = 50);

}  // namespace loopr
