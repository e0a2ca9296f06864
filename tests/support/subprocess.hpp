// Child processes for tests: a shell command with its output captured, a program started in
// the background (the real loopr-mock-llm, a daemon) that is killed and reaped with its handle,
// and a count of the processes still running a command (what a sandbox must not leave behind).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace loopr::testing {

struct CommandOutput {
  int exit_code = -1;
  std::string output;  ///< stdout and stderr, interleaved
};

/// `sh -c command` in `cwd` (empty: current folder).
CommandOutput run_command(const std::string& command, const std::string& cwd = {});

/// Quotes a string for `sh` (single quotes).
std::string shell_quote(const std::string& s);

/// How many processes on this machine, other than this test, have `marker` in their command
/// line (/proc/<pid>/cmdline: arguments separated by NUL bytes, which `marker` may hold).
int processes_with(const std::string& marker);

/// A program running in the background. It dies with the test process (PR_SET_PDEATHSIG), and
/// with this handle (SIGKILL, then reaped) unless it was waited for.
class ChildProcess {
 public:
  /// Starts `argv` (argv[0] is the program's path); stdout and stderr go to `output_file` when
  /// one is given, else they are the test's own.
  explicit ChildProcess(std::vector<std::string> argv, const std::string& output_file = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  /// The exit code once it has ended (128 + signal if killed), nullopt while it runs.
  std::optional<int> poll();
  /// Sends `sig` and waits for the end; the exit code, or 128 + signal.
  int signal_and_wait(int sig);
  /// Waits for the end; the exit code, or 128 + signal.
  int wait();

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

}  // namespace loopr::testing
