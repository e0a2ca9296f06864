// The optional code review (`loops.review`): after a code loop's tests passed, one model call
// without tools reads the phase, the loop's whole diff and the test output, and answers `PASS`
// or `FAIL: reason` (prompts/review.md). What the verdict does is iteration_rules' decision.
#pragma once

#include <memory>
#include <string>

#include <loopr/engine/engine.hpp>

namespace loopr::engine {

struct ReviewResult {
  enum class Verdict { pass, fail, error };
  Verdict verdict = Verdict::error;
  std::string summary;   ///< one line: `PASS …`, the FAIL line, or what went wrong
  std::string feedback;  ///< the reviewer's whole answer (fail), or the error (error)
  std::string model;     ///< the model asked
  Usage usage;           ///< what the review cost (every attempt)
  int attempts = 0;      ///< calls made (a failed call or a reply without a verdict is asked again)
  bool stopped = false;  ///< the person stopped the loop during the review
  std::string transcript;  ///< the prompt and each reply, for the iteration's review.md
};

const char* to_string(ReviewResult::Verdict verdict);

/// Whether iteration work of `loop` is reviewed: loops.review.enabled, a code loop of a phase
/// (not the integration fix loop, whose work the gate checks again).
bool wants_review(const Loop& loop, const Config& config);

/// Asks the reviewer about iteration `n` of `loop` (its worktree as it is now, before the
/// checkpoint): up to loops.review.max_attempts calls, each with the model client's own retries.
awaitable<ReviewResult> review_code(EngineContext& ctx, const Loop& loop,
                                    std::shared_ptr<LoopControl> control, const std::string& phase,
                                    const std::string& test_output, int n);

}  // namespace loopr::engine
