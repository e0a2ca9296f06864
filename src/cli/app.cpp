#include <CLI/CLI.hpp>

#include <loopr/core/log.hpp>

#include "cli/commands.hpp"

namespace loopr::cli {

int run(int argc, char** argv) {
  setup_logging();
  CLI::App app{"loopr: turns a one-line feature request into reviewed, tested code in a git repository.\n"
               "A daemon runs a tree of LLM loops (plan -> spec -> phase -> code); you approve plans,\n"
               "review artifacts and commits in git.",
               "loopr"};
  app.set_version_flag("--version", "loopr 0.1.0");
  app.require_subcommand(0, 1);
  GlobalOptions opts;
  app.add_option("-C", opts.directory, "Run as if started in DIR")->option_text("DIR");
  app.add_flag("--json", opts.json, "Print one JSON document on stdout (no colour), for scripts");
  app.add_flag("-q,--quiet", opts.quiet, "Print nothing but errors");
  app.fallthrough();

  std::string base;
  auto* init = app.add_subcommand("init", "Write .loopr/config.yml (commented defaults) and ignore loopr's runtime folders in git");
  init->add_option("--base", base, "Base branch the plans' work merges into (default: the current branch)")->option_text("BRANCH");
  auto* config = app.add_subcommand("config", "Check .loopr/config.yml and print the effective settings (environment applied)");
  std::string validate_kind, validate_file;
  auto* validate = app.add_subcommand("validate", "Check the format of a plan, spec or phase artifact; prints FILE:LINE: message per problem (exit 1 if any)");
  validate->add_option("kind", validate_kind, "plan | spec | phase")->required();
  validate->add_option("file", validate_file, "The artifact's markdown file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kOk;
  } catch (const CLI::CallForVersion&) {
    std::cout << "loopr 0.1.0\n";
    return kOk;
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    return report(CommandError{kUsage, msg, "see loopr --help"});
  }

  try {
    if (init->parsed()) return run_init(opts, base);
    if (config->parsed()) return run_config(opts);
    if (validate->parsed()) return run_validate(opts, validate_kind, validate_file);
    std::cout << app.help();
    return kOk;
  } catch (const CommandError& e) {
    return report(e);
  } catch (const std::exception& e) {
    return report(CommandError{kFailed, e.what(), "this is a bug in loopr; please report it"});
  }
}

}  // namespace loopr::cli
