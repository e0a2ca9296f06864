// `loopr`'s front door: the global options, the command table (kCommands, each command defined
// where it runs: cli/command.hpp) and the one dispatcher that parses the line, checks what the
// command parsed needs (a repository, its config, the daemon) and runs it, behind the terminal
// filter unless the command writes its own output.
#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <utility>
#include <vector>

#include <loopr/cli/app.hpp>
#include <loopr/core/log.hpp>

#include "cli/command.hpp"
#include "cli/daemon_client.hpp"
#include "cli/docgen.hpp"
#include "cli/terminal_guard.hpp"
#if __has_include("cli/demo.hpp")
#define LOOPR_HAS_DEMO 1
#endif

namespace loopr::cli {

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

namespace {

constexpr const char* kVersion = "loopr 0.1.0";

constexpr const char* kAbout =
    "loopr: turns a one-line feature request into reviewed, tested code in a git repository.\n"
    "A daemon runs a tree of LLM loops (plan -> spec -> phase -> code); you approve plans,\n"
    "review artifacts and commits in git.\n"
    "Exit codes: 0 ok, 1 failed, 2 usage or config error, 3 daemon not reachable,\n"
    "4 unknown id, 5 not allowed in the loop's current state, 130 interrupted.";

// Every command, in the order `--help`, the man page and the completions list them.
const Command* const kCommands[] = {
    &kInitCommand,    &kConfigCommand, &kValidateCommand,      &kDaemonCommand,
    &kSubmitCommand,  &kListCommand,   &kShowCommand,          &kReviewCommand,
    &kApproveCommand, &kRejectCommand, &kIterateCommand,       &kPauseCommand,
    &kResumeCommand,  &kStopCommand,   &kAnswerCommand,        &kLogsCommand,
    &kWatchCommand,   &kMergeCommand,  &kSandboxBridgeCommand, &kMcpServeCommand,
    &kDoctorCommand,  &kWebCommand,    &kStatsCommand,         &kGcCommand,
#ifdef LOOPR_HAS_DEMO
    &kDemoCommand,
#endif
};

struct Defined {
  CLI::App* sub;
  const Command* command;
  CommandRun run;
};

// The options every command takes; `--generate-docs` (hidden) is how the build makes the man
// page and the shell completions from this definition (docgen.hpp).
void add_global_options(CLI::App& app, GlobalOptions& opts, std::string& generate_docs) {
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(0, 1);
  app.add_option("-C", opts.directory, "Run as if started in DIR")->option_text("DIR");
  app.add_flag("--json", opts.json, "Print one JSON document on stdout (no colour), for scripts");
  app.add_flag("-q,--quiet", opts.quiet,
               "Print nothing but errors (and a command's result, e.g. submit's id)");
  app.fallthrough();
  app.add_option("--generate-docs", generate_docs, "man | bash | zsh")->group("");
}

// Each command of the table as a subcommand of `app`, with what runs it.
std::vector<Defined> add_commands(CLI::App& app, std::span<const Command* const> commands) {
  std::vector<Defined> defined;
  for (const Command* command : commands) {
    CLI::App* sub = app.add_subcommand(command->name, command->help);
    if (command->hidden) sub->group("");
    defined.push_back(Defined{sub, command, command->define(*sub)});
  }
  // Subcommand help shows only the subcommand's own options: point at the global ones.
  const std::string footer =
      "Global options (before or after the command): -C DIR, --json, -q; see `loopr --help`.";
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->footer(footer);
    for (CLI::App* nested : sub->get_subcommands([](CLI::App*) { return true; }))
      nested->footer(footer);
  }
  return defined;
}

// Parses the line; an exit code when that is all there is to do (help, version, a usage error).
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kOk;
  } catch (const CLI::CallForVersion&) {
    std::cout << kVersion << "\n";
    return kOk;
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    return report(CommandError{kUsage, msg, "see loopr --help"});
  }
  return std::nullopt;
}

// Runs the command parsed (none: the help): the checks of its line, what it needs, its run.
// Everything it prints passes the terminal filter (terminal_guard.hpp) unless it writes its own
// output.
int dispatch(CLI::App& app, const std::vector<Defined>& defined, const GlobalOptions& opts) {
  const Defined* chosen = nullptr;
  for (const Defined& d : defined)
    if (d.sub->parsed()) chosen = &d;
  std::optional<TerminalGuard> guard;
  if (!chosen || !chosen->run.raw_output || !chosen->run.raw_output()) guard.emplace(opts.json);
  try {
    if (!chosen) {
      std::cout << app.help();
      return kOk;
    }
    if (chosen->run.check) chosen->run.check();
    Session session(opts);
    session.require(chosen->command->needs);
    return chosen->run.run(session);
  } catch (const CommandError& e) {
    return report(e);
  } catch (const std::exception& e) {
    return report(CommandError{kFailed, e.what(), "this is a bug in loopr; please report it"});
  }
}

}  // namespace

const RepoPaths& Session::paths() {
  if (!paths_) paths_.emplace(require_repo(opts));
  return *paths_;
}

const Config& Session::config() {
  if (!config_) config_.emplace(require_config(paths()));
  return *config_;
}

DaemonClient& Session::api() {
  if (!api_) api_.emplace(connect(paths()));
  return *api_;
}

void Session::require(Needs needs) {
  if (needs >= Needs::repo) paths();
  if (needs >= Needs::config) config();
  if (needs >= Needs::daemon) api();
}

int run_commands(std::span<const Command* const> commands, int argc, char** argv) {
  CLI::App app{kAbout, "loopr"};
  GlobalOptions opts;
  std::string generate_docs;
  add_global_options(app, opts, generate_docs);
  const std::vector<Defined> defined = add_commands(app, commands);
  if (auto done = parse(app, argc, argv)) return *done;
  if (!generate_docs.empty()) return print_generated_doc(app, generate_docs, kVersion);
  return dispatch(app, defined, opts);
}

int run(int argc, char** argv) {
  setup_logging();
  return run_commands(kCommands, argc, argv);
}

}  // namespace loopr::cli
