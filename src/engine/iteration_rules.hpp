// The engine's decisions about one loop, as data (DESIGN.md "Stop conditions"): what happens at
// an iteration boundary, after a model call failed for good, and after an iteration (which stop
// condition wins, in which order). No coroutine, store, git, process or clock of its own: the
// runner (loop_runner.cpp) does the I/O around these and stores what they return. Each rung is
// a case of tests/engine/iteration_rules_test.cpp.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <loopr/core/iteration_outcome.hpp>
#include <loopr/core/budget.hpp>
#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/llm/types.hpp>

#include <loopr/core/protected_paths.hpp>

#include "engine/conversation.hpp"
#include "engine/review.hpp"
#include "engine/validation.hpp"

namespace loopr::engine {

/// A status change for the runner to store. `running`: none, the loop goes on.
struct Move {
  LoopStatus status = LoopStatus::running;
  EndReason end = EndReason::none;
  std::string reason;

  bool goes_on() const { return status == LoopStatus::running; }
  bool operator==(const Move&) const = default;
};

// ---------------------------------------------------------------- at an iteration boundary

/// What the outside world asks of a loop between two iterations (engine/loop_control.hpp).
struct BoundaryRequests {
  bool stop = false;
  std::string stop_reason;
  EndReason stop_end = EndReason::stopped_by_user;
  bool pause = false;
};

/// Before the manager's gate: a stop, a pause, a question still open, or an attended pass the
/// person resumed (which completes it: `loop.run.attended_passed` is cleared then).
Move at_boundary(Loop& loop, const BoundaryRequests& asked);

/// The limits checked before every iteration: iterations, the loop's and the tree's cost, the
/// tree's runtime (counted from `plan_start`, its approval). `config` is the tree's (with_budget);
/// `asked` names where a limit came from (the request's `submit --max-cost`, or the config).
/// `tree_input`: the tree's input tokens so far, cached included (limits.max_input_tokens). At a
/// tree's cap (cost, tokens, runtime) the loop pauses with `limits.at_cost_limit: pause` (see
/// at_limit), else fails.
Move check_limits(const Loop& loop, const Config& config, double tree_cost, TimestampMs now,
                  TimestampMs plan_start, const RequestBudget& asked = {},
                  std::int64_t tree_input = 0);

/// What a limit reached does to the loop: a tree's cap (cost_limit, runtime_limit) pauses it
/// when `limits.at_cost_limit` is `pause` (its reason names the `loopr resume` that raises the
/// cap), anything else fails it.
Move at_limit(const Loop& loop, const Config& config, const TurnLimit& hit);

/// Input tokens of `usage`, cached ones (read and written) included.
std::int64_t total_input(const Usage& usage);

/// The same cost and runtime limits between two model turns of an iteration, with what the
/// iteration spent so far (`so_far`, not yet in `loop.usage` or `tree_cost`). A limit reached
/// ends the iteration after the turn that reached it: its work is checkpointed, the loop fails
/// with cost_limit / loop_cost_limit / runtime_limit.
std::optional<TurnLimit> check_turn_limits(const Loop& loop, const Config& config, double tree_cost,
                                           const Usage& so_far, TimestampMs now,
                                           TimestampMs plan_start, const RequestBudget& asked = {},
                                           std::int64_t tree_input = 0);

/// `limits.min_free_space`: with `free` bytes left where the repository is (`dir`; nullopt: not
/// known, no verdict), the loop pauses below the floor (`disk_full`, `disk full: N MiB free in
/// DIR`); the daemon resumes it once there is space again.
Move check_disk(const Loop& loop, std::optional<std::uint64_t> free, std::uint64_t floor,
                const std::string& dir);

/// A write of the iteration failed for want of space (ENOSPC: the checkpoint, the store, a
/// worktree): the loop pauses (`disk_full`) with what failed; its iteration runs again after.
Move on_disk_full(const Loop& loop, std::optional<std::uint64_t> free, const std::string& dir,
                  const std::string& what);

// ---------------------------------------------------------------- a model call failed

/// A model call failed for good (retries used up, or fatal). Updates the run marks (errors in
/// a row, the last error); fatal → failed (model_error); the circuit breaker → failed; else
/// `running`: the same iteration is tried again after `error_backoff`.
Move on_model_error(Loop& loop, const llm::LlmError& error, const Config& config);

/// The wait before the same iteration is tried again after `errors` failures in a row: `base`
/// doubled per error, at most a minute.
std::chrono::milliseconds error_backoff(std::chrono::milliseconds base, int errors);

// ---------------------------------------------------------------- after an iteration

/// What one iteration came to (the runner collects these; nothing here does I/O).
struct IterationFacts {
  Conversation::End end = Conversation::End::done;  ///< never `error` (on_model_error has it)
  int turns = 0;
  int reverted = 0;  ///< files outside the artifact loopr undid (plan/spec/phase under claude-code)
  std::string refusal;   ///< the model refused: why, for a person (end == refused)
  std::string question;  ///< what the model asked the person this iteration (`ask_user`)
  bool signalled = false;  ///< the completion signal is in what the model wrote
  std::optional<Validation> validation;  ///< unset when the conversation ended it early
  /// Protected files the loop changed that its phase does not list (core/protected_paths.hpp):
  /// the tests did not run, `validation` is the failed check that names them.
  std::vector<Breach> breaches;
  std::optional<ReviewResult> review;  ///< loops.review's say, when the tests passed
  bool changed = false;                  ///< the checkpoint committed something new
  std::optional<std::string> stop_script;  ///< a stop script's reason (it exited 0)
  bool pause_requested = false;
  std::string stop_reason;  ///< the stop's reason, when the loop was stopped
  EndReason stop_end = EndReason::stopped_by_user;
  TurnLimit limit;  ///< end == limit: the limit a turn reached (check_turn_limits)
};

/// "iteration's time limit of 20m (loops.code.iteration_max_runtime) ended it after N model
/// turns": the note in the feedback and the iteration record of one that ran out of time.
std::string runtime_ran_out(const Loop& loop, const Config& config, int turns);

/// Whether the iteration's work is checkpointed and judged: the conversation ran to its end and
/// the check ran (not stopped, not refused, not a check that never started).
bool judged(const IterationFacts& facts);

/// Whether the iteration's work gets its checkpoint commit: judged, or ended by a limit between
/// turns (the work so far is kept; it is not validated).
bool checkpointed(const IterationFacts& facts);

/// Whether the iteration's check passed (or, with no check, the completion signal matched),
/// with no protected file changed that its phase does not list.
bool checks_passed(const IterationFacts& facts);

/// Whether the iteration passed: its check passed and, when it was reviewed, the review did.
bool passed(const IterationFacts& facts);

/// The checkpoint commit's message (`loopr(<id>): iteration N: passed|failed: …`).
std::string checkpoint_message(const Loop& loop, int n, const IterationFacts& facts);

/// Whether the stop scripts are run: a judged, failed iteration no stop pattern stopped.
bool wants_stop_scripts(const IterationFacts& facts, const Config& config);

/// The failure a loop's no-progress check compares between iterations: a fingerprint of the
/// output with what changes between two runs of the same failure taken out (durations, temp
/// paths, pids, the worktree's own path `workdir`; test_output.hpp).
std::string failure_fingerprint(const std::string& validation_output,
                                const std::string& workdir = {});

struct IterationVerdict {
  Move move;
  /// The iteration record's status; none: no record (the check never ran: not the code's
  /// failure, and not an iteration).
  std::optional<IterationOutcome> record;
};

/// The stop ladder, in order of how much each says about the loop: passed (complete, awaiting
/// approval, or paused when attended) · the reviewer could not be asked (paused: the person
/// decides) · the review failed loops.review.max_rounds times (paused) · stop pattern · stop
/// script · a question · no progress · max iterations · attended / pause. Updates the run marks of `loop` (feedback, no-progress
/// count, the question and answer, errors in a row).
IterationVerdict decide(Loop& loop, int n, const IterationFacts& facts, const Config& config);

}  // namespace loopr::engine
