// Runs a shell command for a test and captures stdout+stderr and the exit status.
#pragma once

#include <string>

namespace loopr::testing {

struct CommandOutput {
  int exit_code = -1;
  std::string output;  ///< stdout and stderr, interleaved
};

/// `sh -c command` in `cwd` (empty: current folder).
CommandOutput run_command(const std::string& command, const std::string& cwd = {});

/// Quotes a string for `sh` (single quotes).
std::string shell_quote(const std::string& s);

}  // namespace loopr::testing
