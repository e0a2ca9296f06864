// A command of `loopr` as data (git's `commands[]` with `run_builtin()`): its name, its help,
// whether `--help` lists it, and `define`, which adds its options to its CLI11 subcommand and
// returns what runs it. Each is defined next to the function that runs it; app.cpp lists them in
// kCommands, and one dispatcher (cli::run) parses the line, picks the command parsed and runs it.
#pragma once

#include <functional>
#include <utility>

#include "cli/context.hpp"

namespace CLI {
class App;
}

namespace loopr::cli {

/// What a command's definition hands the dispatcher: its run, once the line is parsed, and
/// whether that run writes to the terminal unfiltered (terminal_guard.hpp): the daemon in the
/// foreground writes only its log, the hidden bridges speak a protocol on stdout.
struct CommandRun {
  explicit CommandRun(std::function<int()> r, std::function<bool()> raw = {})
      : run(std::move(r)), raw_output(std::move(raw)) {}
  std::function<int()> run;
  std::function<bool()> raw_output;  ///< empty: never
};

struct Command {
  const char* name;
  const char* help;
  bool hidden;  ///< not in `--help`, the man page or the completions (loopr's own helpers)
  /// Adds the command's options (and nested commands) to `sub`; their values live in the run.
  CommandRun (*define)(CLI::App& sub, const GlobalOptions& opts);
};

// Every command, in the order `--help` lists them (app.cpp's kCommands), each defined where it
// runs.
extern const Command kInitCommand, kConfigCommand;  // init_command.cpp
extern const Command kValidateCommand;              // validate_command.cpp
extern const Command kDaemonCommand;                // daemon_command.cpp
extern const Command kSubmitCommand, kListCommand, kShowCommand, kReviewCommand, kApproveCommand,
    kRejectCommand, kIterateCommand, kPauseCommand, kResumeCommand, kStopCommand,
    kMergeCommand;                                 // loop_commands.cpp
extern const Command kAnswerCommand;               // coordination.cpp
extern const Command kLogsCommand, kWatchCommand;  // watch_command.cpp
extern const Command kSandboxBridgeCommand;        // sandbox_bridge.cpp
extern const Command kMcpServeCommand;             // mcp_serve_command.cpp
extern const Command kDoctorCommand;               // doctor_command.cpp
extern const Command kWebCommand;                  // web_command.cpp
extern const Command kStatsCommand;                // stats_command.cpp
extern const Command kGcCommand;                   // gc_command.cpp
extern const Command kDemoCommand;                 // demo_command.cpp

/// Joins the words of an unquoted argument (`loopr submit add a flag`) with single spaces.
std::string join_words(const std::vector<std::string>& words);

}  // namespace loopr::cli
