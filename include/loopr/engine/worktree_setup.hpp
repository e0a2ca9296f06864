// A worktree made ready for the project's commands before the first of them runs: the `setup:`
// commands of the config (a build step, generated files), run once per worktree in the same
// sandbox as every command. Used for a code loop's worktree (a fix loop's too), the integration
// gate's and the baseline check's.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <loopr/engine/engine.hpp>

namespace loopr::engine {

struct SetupRun {
  bool ran = false;      ///< commands ran now (false: none configured, or done before here)
  bool passed = true;    ///< every command exited 0 (or nothing had to run)
  bool stopped = false;  ///< `cancel` was set while one ran (the setup runs again next time)
  bool could_not_start = false;  ///< the sandbox or cluster never ran it (not the command's fault)
  std::string command;           ///< the command that failed
  std::string output;            ///< `$ command` lines and what each printed (capped per command)
  std::string summary;           ///< one line
  std::int64_t duration_ms = 0;
};

struct SetupRequest {
  std::filesystem::path workdir;
  std::map<std::string, std::string> env;  ///< LOOPR_* variables of the loop it is for
  const std::atomic<bool>* cancel = nullptr;
  /// Where the output is written (`.loopr/logs/loops/<id>/setup.log`); empty: not written.
  std::filesystem::path log_file;
};

/// Runs `setup.commands` in `request.workdir`, one after another until one fails, each through
/// the executor (a runner slot of its class, `setup.timeout`, the network with `setup.network`),
/// unless they passed there before: a stamp in the worktree's git admin folder names the
/// commands that passed, written only when all did (a setup a crash cut short runs again; new
/// commands in the config run in worktrees made before too). On the pool.
awaitable<SetupRun> run_setup(EngineContext& ctx, SetupRequest request);

/// A setup that did not pass, for a blocked loop's or plan's reason: what failed, the end of
/// its output, and what to do.
std::string setup_failure_text(const SetupRun& run, std::size_t tail_bytes = 1500);

}  // namespace loopr::engine
