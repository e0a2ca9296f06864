// The command executor: the one way loopr runs a command for a loop — `run_command`, the code
// validation, `limits.stop_scripts`, the `claude` CLI (DESIGN.md "Trust boundary"). The local
// executor confines each command with bubblewrap; `sandbox: none` runs it unconfined and says
// so. Another executor (a cluster's) can run the same confined command elsewhere.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/core/process.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/core/result.hpp>

namespace loopr::exec {

/// One command for one loop.
struct Command {
  std::vector<std::string> argv;           ///< `/bin/sh -c TEXT` for shell commands
  std::filesystem::path workdir;           ///< the loop's worktree: read-write, the cwd
  std::string runner_class = "default";    ///< network only if the class is in sandbox.network
  bool network = false;                    ///< the network regardless of class
  /// Runs on this machine whatever the executor (the claude CLI: the model's own client, with
  /// the daemon's credentials and its proxy), never on a cluster's node.
  bool stays_local = false;
  std::map<std::string, std::string> env;  ///< on top of the allowlisted environment
  std::vector<std::filesystem::path> writable;   ///< more read-write paths (the claude CLI's state)
  std::vector<std::filesystem::path> read_only;  ///< more read-only paths (a program's folder)
  std::optional<std::string> stdin_data;
  std::chrono::milliseconds timeout{0};  ///< 0: none
  std::size_t output_cap = 256 * 1024;
  bool merge_stderr = true;
  std::function<void(std::string_view line)> on_line;
  const std::atomic<bool>* cancel = nullptr;
  /// The sweep after the command keeps its listing for the checkpoint that follows
  /// (core/sweep_handoff.hpp), when the executor knows nothing the command started outlived
  /// it. Set by the one caller that checkpoints next (a code loop's validation).
  bool hand_over_sweep = false;

  /// `/bin/sh -c text` in `workdir`.
  static Command shell(std::string text, std::filesystem::path workdir);
};

/// Copies what the caller asks of a run's process as it is (input, time limit, output cap,
/// stderr, line callback, cancel flag) between the two shapes of a run: from a command to the
/// process an executor starts here, and from a process to the command that runs it sandboxed.
void take_process_io(const Command& c, ProcessSpec& spec);
void take_process_io(const ProcessSpec& spec, Command& c);

/// Commands an executor has handed to a cluster and not yet seen end (for `daemon status`).
struct ExecutorLoad {
  int queued = 0;   ///< submitted, not started on a node yet
  int running = 0;  ///< started on a node
  /// Cancelled (or timed out), still listed by the cluster past executor.slurm.cancel_timeout:
  /// the node has not confirmed that their processes ended.
  int cleaning = 0;
};

/// What an executor is, for `daemon status`, `loopr config` and the log.
struct ExecutorInfo {
  std::string kind;  ///< "bubblewrap" | "none" | "slurm"
  bool confined = false;
  std::string description;  ///< one line: how commands are confined (or that they are not)
};

class Executor {
 public:
  virtual ~Executor() = default;

  /// Runs `command` to its end, timeout or cancel (blocking: call from a worker thread).
  /// Nothing it started survives. A sandbox that cannot be set up is `spawn_failed` with the
  /// reason, never the command's own failure.
  virtual ProcessResult run(const Command& command) = 0;

  virtual const ExecutorInfo& info() const = 0;

  /// Why commands cannot run here (the sandbox does not work), or nullopt when they can.
  /// Checked again (at most every few seconds) while it fails, so installing what was missing
  /// needs no daemon restart.
  virtual std::optional<std::string> unavailable() = 0;

  /// Jobs in flight on a cluster; zero for the local executors.
  virtual ExecutorLoad load() const { return {}; }

  /// The daemon stops: ends every command in flight elsewhere (a cluster's jobs are cancelled
  /// and waited for), and every later `run` returns at once as cancelled. Blocking. A local
  /// command ends with its loop's cancel flag, so the local executors do nothing here.
  virtual void cancel_all() {}
};

/// Where a command's environment comes from: the daemon's own (after its secrets were taken
/// out), read through this lookup; replaceable in tests.
struct ExecutorOptions {
  RepoPaths paths;
  EnvLookup env = process_env();
  std::string bwrap = "bwrap";  ///< the bubblewrap binary (looked up in PATH)
  /// A control group per command where the daemon may make one (false: rlimits only; for
  /// measuring what the groups cost).
  bool control_groups = true;
  /// The sandbox's start off the command's path (issue 32): the control group made ahead, never
  /// used by another command, and joined without the global lock; the network namespace made
  /// ahead (false: as before, for measuring).
  bool start_ahead = true;
  /// `executor:` of the config: `local` runs commands here, `slurm` on a cluster's nodes.
  ExecutorConfig executor = {};
};

/// The executor `config.sandbox` asks for. Never fails: a sandbox that does not work is an
/// executor whose `unavailable()` says why.
std::unique_ptr<Executor> make_executor(const SandboxConfig& config, ExecutorOptions options);

/// With `executor.worktree_root` set: makes `.loopr/worktrees` a link to this repository's
/// folder under that root (so every loop's worktree is made there, where the nodes see it)
/// and keeps the link out of `git status`. Refuses to move worktrees that exist.
Result<void> place_worktrees(const ExecutorConfig& config, const RepoPaths& paths);

/// Runs one trivial command through `executor` in a fresh folder under `scratch` and checks
/// that it ran confined; the error says what is missing and how to fix it.
Result<void> self_test(Executor& executor, const std::filesystem::path& scratch);

}  // namespace loopr::exec
