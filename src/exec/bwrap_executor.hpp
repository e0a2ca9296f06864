// The local sandbox: each command under bubblewrap (see bwrap_args.hpp for what it sees).
#pragma once

#include <memory>

#include <loopr/exec/executor.hpp>

namespace loopr::exec {

std::unique_ptr<Executor> make_bwrap_executor(const SandboxConfig& config, ExecutorOptions options);

/// What a failed bubblewrap start means for the user, with what to do (for the error line).
std::string explain_sandbox_failure(std::string_view bwrap_output);

}  // namespace loopr::exec
