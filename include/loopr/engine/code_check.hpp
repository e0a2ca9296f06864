// The code validation command, run once through the executor in a folder: what a code loop's
// validation runs in its worktree and what the integration gate runs on a plan's integration tip.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <loopr/engine/engine.hpp>

namespace loopr::engine {

struct CodeCheck {
  bool passed = false;
  bool has_check = true;         ///< false: no validation command is configured (passes)
  bool timed_out = false;
  bool stopped = false;          ///< `cancel` was set while it ran
  bool could_not_start = false;  ///< the sandbox could not be set up (not the command's failure)
  std::optional<int> exit_code;
  std::string command;   ///< what ran
  std::string output;    ///< what it printed (capped)
  std::string summary;   ///< one line
  std::string feedback;  ///< for a model's next prompt when it failed (the end of the output)
  std::int64_t duration_ms = 0;
  std::vector<std::string> jobs;                     ///< cluster job ids (executor: slurm)
  std::vector<std::string> infrastructure_failures;  ///< tries the cluster lost, one line each
};

struct CodeCheckRequest {
  std::string command;  ///< empty: nothing to run (the check passes, has_check false)
  std::filesystem::path workdir;
  std::map<std::string, std::string> env;
  const std::atomic<bool>* cancel = nullptr;
  /// The checkpoint follows with nothing run in between: the sweep after the command may hand
  /// its listing over (exec::Command::hand_over_sweep).
  bool hand_over_sweep = false;
};

/// Runs `request.command` in `request.workdir` through `ctx.executor` (a runner slot of its
/// class, `loops.code.iteration_timeout`), on the pool.
awaitable<CodeCheck> run_code_check(EngineContext& ctx, CodeCheckRequest request);

}  // namespace loopr::engine
