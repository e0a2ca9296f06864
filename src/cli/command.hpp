// A command of `loopr` as data (git's `commands[]` with `run_builtin()`): its name, its help,
// whether `--help` lists it, what it needs before it runs (a repository, its config, the daemon)
// and `define`, which adds its options to its CLI11 subcommand and returns what runs it. Each is
// defined next to the function that runs it; app.cpp lists them in kCommands, and one dispatcher
// (run_commands) parses the line, checks what the command parsed needs and runs it.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <utility>

#include "cli/context.hpp"
#include "cli/daemon_client.hpp"

namespace CLI {
class App;
}

namespace loopr::cli {

/// What a command needs before it runs; the dispatcher checks it, in this order, before the run
/// (git's RUN_SETUP). Each level includes the ones above it.
enum class Needs {
  nothing,  ///< runs anywhere (its run finds what it needs itself, if anything)
  repo,     ///< a git repository (-C DIR or the current folder): exit 2 outside one
  config,   ///< and its `.loopr/config.yml` read and checked (defaults when absent): exit 2 if bad
  daemon,   ///< and the repository's daemon running: exit 3 otherwise
};

/// What a command's run gets: the global options and the repository, its config and its daemon,
/// each found once, when first asked for. The dispatcher asks for what the command's Needs name
/// before the run, so a run that asks again gets it at once.
class Session {
 public:
  explicit Session(const GlobalOptions& o) : opts(o) {}
  const GlobalOptions& opts;
  const RepoPaths& paths();  ///< CommandError (exit 2) outside a git repository
  const Config& config();    ///< CommandError (exit 2) for a config file that is not valid
  DaemonClient& api();       ///< CommandError (exit 3) when the daemon is not running
  /// What `needs` names, in Needs' order; the first missing is the CommandError.
  void require(Needs needs);

 private:
  std::optional<RepoPaths> paths_;
  std::optional<Config> config_;
  std::optional<DaemonClient> api_;
};

/// What a command's definition hands the dispatcher: its run, once the line is parsed, whether
/// that run writes to the terminal unfiltered (terminal_guard.hpp: the daemon in the foreground
/// writes only its log, the hidden bridges speak a protocol on stdout), and the checks of the
/// line alone (an empty feedback) that come before what the command needs.
struct CommandRun {
  explicit CommandRun(std::function<int(Session&)> r, std::function<bool()> raw = {})
      : run(std::move(r)), raw_output(std::move(raw)) {}
  /// The usage checks that need nothing: a bad line is exit 2 wherever it is typed.
  CommandRun& checked_by(std::function<void()> c) {
    check = std::move(c);
    return *this;
  }
  std::function<int(Session&)> run;
  std::function<bool()> raw_output;  ///< empty: never
  std::function<void()> check;       ///< empty: none
};

struct Command {
  const char* name;
  const char* help;
  bool hidden;  ///< not in `--help`, the man page or the completions (loopr's own helpers)
  Needs needs;  ///< checked by the dispatcher after `check`, before the run
  /// Adds the command's options (and nested commands) to `sub`; their values live in the run.
  CommandRun (*define)(CLI::App& sub);
};

/// The front door over a table of commands: parses the line (the global options, then the
/// command's), and runs the command parsed: its `check`, then what its Needs name, then its run.
/// `cli::run` is this over kCommands; the tests run it over tables of their own.
int run_commands(std::span<const Command* const> commands, int argc, char** argv);

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
