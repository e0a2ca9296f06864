// The local sandbox: each command under bubblewrap (see bwrap_args.hpp for what it sees).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <loopr/exec/executor.hpp>

namespace loopr::exec {

/// The bubblewrap command line for a command, for an executor that starts it elsewhere (a
/// cluster node): the same mounts, environment and limits the local executor uses.
struct SandboxInvocation {
  std::vector<std::string> args;           ///< after `bwrap`, through `--` and the argv
  std::map<std::string, std::string> env;  ///< bwrap's whole environment (the allowlist)
  std::string git_config;                  ///< the sanitised git config for `config_fd`, or ""
  std::uint64_t open_files = 0;            ///< RLIMIT_NOFILE to set before bwrap
};

class LocalSandbox : public Executor {
 public:
  /// `config_fd` and `status_fd` are the descriptor numbers bwrap will have (`config_fd` is
  /// used only when `git_config` is not empty).
  virtual SandboxInvocation invocation(const Command& command, int config_fd, int status_fd) = 0;
};

std::unique_ptr<LocalSandbox> make_bwrap_executor(const SandboxConfig& config,
                                                  ExecutorOptions options);

/// What a failed bubblewrap start means for the user, with what to do (for the error line).
std::string explain_sandbox_failure(std::string_view bwrap_output);

}  // namespace loopr::exec
