// What an iteration's prompt is made of (step 1 and 2 of DESIGN.md "One iteration"): the state
// read from the loop's worktree and the store, and the `{{name}}` values every template gets.
// Public so that tests can hold each shipped prompt against exactly what the engine provides.
#pragma once

#include <map>
#include <string>

#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>

namespace loopr {
class TaskStore;
}

namespace loopr::engine {

/// What step 1 reads: the input artifact, the loop's own work and what it serves.
struct IterationState {
  std::string input;
  /// The loop's cumulative change against where it started (`changes_since`), then the files
  /// its last iteration changed.
  std::string status;
  std::string diff;  ///< the same change as a unified diff, cut to `git.diff_max_bytes`
  std::string log;
  std::string purpose;  ///< the plan's title and success criteria, the parent spec's overview
  std::string error;    ///< the worktree could not be read
};

/// Where a loop's work starts: the integration tip it was based on (its first branch point or
/// the tip it was last rebased onto); for a plan, its base branch (the fork point with it).
std::string work_start(const Loop& loop);

/// Reads step 1's state (blocking: call on the pool). `store` gives the loop's ancestors for
/// `purpose` (null: none). `clean_at`: the checkpoint after which nothing wrote the worktree, if
/// the caller knows one (git::WorkStateOptions::clean_at).
IterationState read_state(const Loop& loop, const Config& config, const TaskStore* store,
                          const std::string& clean_at = {});

/// The feedback of earlier iterations as `{{progress}}` shows it (a sentence when there is none).
std::string progress_text(const Loop& loop, const Config& config);

/// The values of iteration `n`'s prompt (plan, spec, phase, code and integration-fix templates).
std::map<std::string, std::string> prompt_vars(const Loop& loop, const Config& config,
                                               const IterationState& state, int n);

/// The values of the judge's prompt for `loop`'s artifact `artifact` at `artifact_path`.
std::map<std::string, std::string> judge_vars(const Loop& loop, const Config& config,
                                              const std::string& input, const std::string& artifact,
                                              const std::string& artifact_path);

/// The values of the code reviewer's prompt (`review.md`) for iteration `n` of a code loop: its
/// phase, its whole diff and what its test command printed.
std::map<std::string, std::string> review_vars(const Loop& loop, const Config& config,
                                               const std::string& phase, const std::string& diff,
                                               const std::string& test_output, int n);

}  // namespace loopr::engine
