// Step 5 of an iteration: deterministic validation. Plan/spec/phase: the artifact's format
// check (+ the LLM judge when `llm.judge` is on). Code: the configured command in the worktree.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <loopr/engine/engine.hpp>

namespace loopr::engine {

struct Validation {
  bool passed = false;
  bool has_check = true;          ///< false: a code loop with no validation command configured
  std::optional<int> exit_code;   ///< of the command (code loops)
  bool timed_out = false;
  bool stopped = false;           ///< the user stopped the loop during validation
  std::string command;            ///< what ran (code loops)
  std::string output;             ///< what the check printed (validation.log)
  std::string feedback;           ///< for the next prompt when it failed
  std::string summary;            ///< one line
  Usage judge_usage;              ///< tokens the judge spent
  std::int64_t duration_ms = 0;   ///< time the check took (the command, or the judge)
  /// The command never ran (the sandbox or the cluster failed): not the code's failure.
  bool could_not_start = false;
  std::vector<std::string> jobs;                     ///< cluster job ids (executor: slurm)
  std::vector<std::string> infrastructure_failures;  ///< tries the cluster lost, one line each
};

awaitable<Validation> validate(EngineContext& ctx, const Loop& loop, std::shared_ptr<LoopControl> control,
                               const std::string& input_text);

/// The judge's verdict from its reply: the first `PASS` or `FAIL: reason` line; nullopt if none.
std::optional<std::pair<bool, std::string>> parse_verdict(const std::string& reply);

}  // namespace loopr::engine
