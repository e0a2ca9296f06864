// One iteration of a loop (DESIGN.md "One iteration"), steps 1 to 7: read state, render the
// prompt, talk with the model, validate, checkpoint, decide, record. LoopRunner::run
// (loop_runner.cpp) runs these one after another and checks what comes between them (stop,
// pause, the gate, the disk, the limits).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <loopr/api/events.hpp>
#include <loopr/engine/engine.hpp>
#include <loopr/engine/prompt_vars.hpp>
#include <loopr/git/worktree.hpp>
#include <loopr/tools/tool_router.hpp>

#include "engine/conversation.hpp"
#include "engine/iteration_rules.hpp"
#include "engine/review.hpp"
#include "engine/validation.hpp"

namespace loopr::engine {

// The state and the rendered prompt of one iteration (steps 1 and 2).
struct Prepared {
  IterationState state;
  std::string system;  ///< the template's fixed sections (prompt caching's shared prefix)
  std::string prompt;  ///< the iteration's opening message
};

// The free space where the loop writes: the repository (store, logs) and its worktree, the
// smaller of the two (they may be different file systems: executor.worktree_root).
struct DiskLook {
  std::optional<std::uint64_t> free;
  std::string dir;
};

DiskLook look_at_disk(const RepoPaths& paths, const Loop& loop);

// Whether a loop runs commands at all (then it cannot go on without a working sandbox).
bool needs_commands(const Loop& loop, const Config& config);

// The `cost_limit` event of a loop that pauses at its tree's cap (limits.at_cost_limit: pause),
// for notify and `loopr review`; nullopt for any other move.
std::optional<Event> limit_event(const EngineContext& ctx, const Loop& loop, const Move& move,
                                 const Config& file_config, const RequestBudget& budget);

class IterationRun {
 public:
  IterationRun(EngineContext& ctx, std::shared_ptr<LoopControl> control, RequestBudget budget,
               TimestampMs plan_start)
      : ctx_(ctx), control_(std::move(control)), budget_(budget), plan_start_(plan_start) {}

  // Runs iteration `loop.iteration + 1`; `loop` is the stored loop afterwards. (The loop is
  // passed by reference down to the one write that stores it: every Loop a suspended coroutine
  // frame holds is ~0.9 KB per running loop.) The decisions are iteration_rules'; this is the
  // I/O around them: read → render → converse → validate → checkpoint → decide → record.
  awaitable<Result<void>> run(Loop& loop);

 private:
  awaitable<Result<Prepared>> prepare(const Loop& loop, const Config& config, int n);

  awaitable<Conversation> talk(const Loop& loop, const Config& config, int n,
                               const Prepared& prompt);

  IterationFacts facts_of(const Conversation& conv) const;

  // The reviewer's say on a passing code iteration (loops.review), with its own cost; a stop
  // during it stops the iteration like a stop during the tests.
  awaitable<void> review(Loop& loop, int n, const std::string& phase, IterationFacts& facts);

  // The protection rule and the merge policy again on exactly what the checkpoint committed (a
  // test the tests rewrote while they ran): a finding fails the iteration, naming the files.
  awaitable<void> check_committed(const Loop& loop, const Config& config, const std::string& input,
                                  const std::string& sha, IterationFacts& facts);

  awaitable<Result<git::CommitOutcome>> checkpoint(const Loop& loop, std::string message);

  // Step 5 of `run`: the protected paths, the validation and the review; an error when the
  // protected paths cannot be checked.
  awaitable<Result<void>> check(Loop& loop, const Config& config, int n, const Prepared& prepared,
                                IterationFacts& facts);
  // Step 6 of `run`: the checkpoint commit and the stop scripts; its sha (empty when the
  // iteration is not checkpointed), or why the commit failed.
  awaitable<Result<std::string>> commit_and_stop_scripts(Loop& loop, const Config& config, int n,
                                                         const std::string& input,
                                                         IterationFacts& facts);

  // The review in the iteration record and its event (the feedback is in the record's summary
  // and the loop's feedback; the whole exchange in review.md).
  static ReviewReceipt review_receipt(const ReviewResult& r);
  static api::ReviewFinished review_event(int n, const ReviewResult& r);

  // Where the check ran, for `loopr show ID --iteration N` (the log only: v.output is compared
  // between iterations, and job ids always differ).
  static std::string executor_note(const Validation& v);

  // One `executor_retry` event per try the cluster lost (the job never ran, or was lost).
  static std::vector<Event> infrastructure_events(const Loop& loop, int n, const Validation& v);

  // Ends the run without an iteration record (setup problems, a check that never ran).
  awaitable<Result<void>> finish(Loop& loop, const Move& move, std::vector<Event> events);

  // Whether a failed write was for want of space (its text, or the disk below the floor now):
  // the move that pauses the loop (`disk_full`), else nullopt.
  awaitable<std::optional<Move>> disk_full(const Loop& loop, const Config& config,
                                           std::string what);

  // loopr itself cannot go on with this loop (its worktree, template or checkpoint).
  awaitable<Result<void>> fail(Loop& loop, std::string why);

  // A model call failed for good (iteration_rules: on_model_error). Its tokens were spent all
  // the same, so they stay in the loop's cost. A retryable one is not an iteration: the same
  // iteration is tried again after a back-off.
  awaitable<Result<void>> model_error(Loop& loop, const Conversation& conv);

  // The iteration's record (status, usage, summary, details) and the events that go with it.
  IterationRecord make_record(const Loop& loop, int n, TimestampMs started,
                              const IterationVerdict& verdict, const IterationFacts& facts,
                              const Conversation& conv, const std::string& sha) const;
  std::vector<Event> record_events(const Loop& loop, const IterationRecord& rec,
                                   const IterationFacts& facts, const Move& move) const;

  awaitable<Result<void>> record(Loop& loop, int n, TimestampMs started,
                                 const IterationVerdict& verdict, const IterationFacts& facts,
                                 const Conversation& conv, const std::string& sha);

  EngineContext& ctx_;
  std::shared_ptr<LoopControl> control_;
  RequestBudget budget_;            ///< the plan's own limits (submit --max-cost …)
  TimestampMs plan_start_;          ///< when the tree's runtime started counting
  std::int64_t state_ms_ = 0;       ///< reading the worktree's state for the prompt
  std::int64_t checkpoint_ms_ = 0;  ///< the checkpoint commit
  /// The checkpoint after which nothing wrote the worktree (no tool, no command: the next state
  /// read needs no walk of it), or empty. Known only within this run: a new run reads it whole.
  std::string clean_at_;
  std::string clean_from_;                 ///< clean_at_ as this iteration started
  tools::ToolRouter::Writes tool_writes_;  ///< what this iteration's tools wrote
  bool commands_ran_ = false;              ///< a command ran in the worktree in this iteration
  bool validated_last_ = false;            ///< the validation command is the last that ran there
};

}  // namespace loopr::engine
