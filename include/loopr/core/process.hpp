// Child processes for validation commands, run_command and the `claude` CLI: blocking, in their
// own process group (a timeout or cancel kills the whole group), output capped with head and
// tail kept. Call from a worker thread (see loopr/net/asio.hpp run_blocking), never the io thread.
// No file descriptor of the parent above stderr reaches a child, except those passed on purpose.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopr {

/// Kernel limits set in the child before exec (setrlimit; inherited by everything it starts).
/// Unset fields keep the parent's limit.
struct ResourceLimits {
  std::optional<std::uint64_t> processes;   ///< RLIMIT_NPROC (not enforced for root: see cgroups)
  std::optional<std::uint64_t> open_files;  ///< RLIMIT_NOFILE
  std::optional<std::uint64_t> file_size;   ///< RLIMIT_FSIZE, bytes: a bigger write gets EFBIG
  std::optional<std::uint64_t> data;        ///< RLIMIT_DATA, bytes (heap and private mappings)
  std::optional<std::uint64_t> cpu_seconds; ///< RLIMIT_CPU
};

struct ProcessSpec {
  std::vector<std::string> argv;          ///< argv[0] is looked up in PATH
  std::string cwd;                        ///< empty: the current folder
  std::map<std::string, std::string> env_set;  ///< added to / replacing the inherited environment
  std::vector<std::string> env_unset;     ///< removed from the inherited environment
  std::optional<std::string> stdin_data;  ///< written then closed; none: stdin is /dev/null
  std::chrono::milliseconds timeout{0};   ///< 0: none
  std::size_t output_cap = 256 * 1024;    ///< bytes kept: the first half and the last half
  bool merge_stderr = true;               ///< stderr into `output` (else into `error_output`)
  /// Called with each complete stdout line (without '\n', made valid UTF-8) as it arrives,
  /// before capping.
  std::function<void(std::string_view line)> on_line;
  const std::atomic<bool>* cancel = nullptr;  ///< set to true to kill the group
  /// false: the child's environment is exactly `env_set` (nothing inherited).
  bool inherit_env = true;
  /// Descriptors the child gets as 3, 4, … in this order; every other one above 2 is closed.
  std::vector<int> pass_fds;
  ResourceLimits limits;
  /// Open `cgroup.procs` files, or (cgroup v1) `tasks` files: the child writes "0" (itself) to
  /// each before exec, so it and all it starts are counted and limited there (and can be killed
  /// as one).
  std::vector<int> cgroup_procs_fds;
  /// A network namespace (an open `/proc/…/ns/net`) the child enters before exec; -1: none.
  int netns_fd = -1;
  /// A sandbox's start: the child joins a fresh, empty session keyring (not the person's) and,
  /// where Landlock can (Linux 6.12+), it and all it starts reach no abstract unix socket and
  /// signal no process made outside. Sets no_new_privs (not for a setuid program).
  bool isolate = false;
};

struct ProcessResult {
  int exit_code = -1;        ///< -1 if killed by a signal or not started
  int term_signal = 0;       ///< the signal that ended it, 0 if it exited
  bool timed_out = false;
  bool cancelled = false;
  bool spawn_failed = false; ///< could not start (see `output` for why)
  std::string output;        ///< capped: head + "\n[… N bytes omitted …]\n" + tail; valid UTF-8
                             ///< (an ill-formed byte is U+FFFD), as is `error_output`
  std::string error_output;  ///< stderr when not merged (capped the same way)
  std::size_t total_bytes = 0;  ///< bytes the process wrote to stdout (and stderr if merged)
  std::chrono::milliseconds duration{0};
  /// Where a cluster executor ran it: the job id of each try, in order (empty locally).
  std::vector<std::string> jobs;
  /// Tries that failed for the cluster's sake (the job never ran or was lost), one line each,
  /// before this result; with `spawn_failed` the last one is why it never ran.
  std::vector<std::string> infrastructure_failures;

  bool succeeded() const { return exit_code == 0 && !timed_out && !cancelled; }
};

/// Runs the process to its end (or timeout/cancel) and returns what happened. Never throws for
/// the child's failures; a process that cannot start is `spawn_failed` with a message.
ProcessResult run_process(const ProcessSpec& spec);

/// `sh -c command`.
inline ProcessSpec shell(std::string command, std::string cwd = {}) {
  ProcessSpec s;
  s.argv = {"/bin/sh", "-c", std::move(command)};
  s.cwd = std::move(cwd);
  return s;
}

/// In a forked child before exec: marks every descriptor from `first` up close-on-exec, so the
/// new program inherits none of them. Async-signal-safe.
void close_fds_on_exec(int first = 3);

/// Keeps the first and last `cap/2` bytes of `text` with a marker between (UTF-8 safe cut).
std::string cap_head_tail(std::string_view text, std::size_t cap);

}  // namespace loopr
