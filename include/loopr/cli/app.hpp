// The command-line interface (INTERFACE.md "Commands"): parses arguments, runs one command,
// returns its exit code. Errors are one line on stderr: `loopr: what went wrong (what to do)`.
#pragma once

namespace loopr::cli {

/// INTERFACE.md's exit codes.
enum ExitCode : int {
  kOk = 0,
  kFailed = 1,
  kUsage = 2,
  kDaemonUnreachable = 3,
  kUnknownId = 4,
  kWrongState = 5,
};

int run(int argc, char** argv);

}  // namespace loopr::cli
