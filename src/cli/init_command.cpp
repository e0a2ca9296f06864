// `loopr init [--base BRANCH] [--validation CMD]`: writes `.loopr/config.yml` with commented
// defaults and the project's test command (found from the repository, or given), and keeps
// loopr's runtime folders out of git. Idempotent: an existing config is checked, not replaced.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include <loopr/core/protected_paths.hpp>
#include <loopr/git/work_tree_state.hpp>
#include <loopr/project/detect.hpp>
#include <loopr/project/provision.hpp>
#include <loopr/project/toolchains.hpp>

#include "cli/command.hpp"
#include "cli/commands.hpp"
#include "cli/terminal.hpp"

namespace loopr::cli {
namespace {

using project::Provisioning;
using project::TestCommandCandidate;

// A candidate that cannot run on this machine, and why.
struct Skipped {
  TestCommandCandidate candidate;
  std::string reason;
};

// The test command the new config gets, and why.
struct ChosenValidation {
  std::string command;  ///< empty: none found
  std::string source;
  std::vector<TestCommandCandidate> others;
  std::vector<std::string> build_dirs;
  std::vector<Skipped> skipped;  ///< found, but cannot run here

  std::vector<std::string> comment() const {
    std::vector<std::string> lines;
    if (command.empty())
      lines = {"`loopr init` found no test command" +
                   std::string(skipped.empty() ? "" : " that can run here") +
                   ". Put the command that runs your tests in",
               "`validation:` below; `loopr submit` refuses until it is set."};
    else
      lines = {"The test command, from " + source + "."};
    for (const auto& s : skipped)
      lines.push_back("Skipped: " + s.candidate.command + " (" + s.candidate.source +
                      "): " + s.reason + ".");
    if (command.empty()) return lines;
    if (!others.empty()) {
      lines.push_back("Also found (put one in `validation:` to use it instead):");
      std::size_t width = 0;
      for (const auto& c : others) width = std::max(width, c.command.size());
      for (const auto& c : others)
        lines.push_back("  " + c.command + std::string(width - c.command.size() + 2, ' ') + "# " +
                        c.source);
    }
    return lines;
  }
};

// The first candidate whose programs are installed; the ones before it that are not are skipped
// (with why), the later ones listed as alternatives.
ChosenValidation choose_validation(const std::filesystem::path& root,
                                   const std::optional<std::string>& explicit_command,
                                   const EnvLookup& env) {
  if (explicit_command) return {*explicit_command, "`loopr init --validation`", {}, {}, {}};
  ChosenValidation chosen;
  for (auto& c : project::detect_test_commands(root)) {
    // As it would run: `pytest` with the checkout's venv is that venv's python.
    std::string runs =
        project::detect_provisioning(root, c.command, env).validation.value_or(c.command);
    if (std::string why = project::not_runnable(runs, root, env); !why.empty()) {
      chosen.skipped.push_back({std::move(c), why});
    } else if (chosen.command.empty()) {
      chosen.command = c.command;
      chosen.source = c.source;
      chosen.build_dirs = c.build_dirs;
    } else {
      chosen.others.push_back(std::move(c));
    }
  }
  return chosen;
}

nlohmann::json validation_json(const ChosenValidation& v) {
  nlohmann::json others = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& c : v.others) others.push_back({{"command", c.command}, {"source", c.source}});
  for (const auto& s : v.skipped)
    skipped.push_back(
        {{"command", s.candidate.command}, {"source", s.candidate.source}, {"reason", s.reason}});
  return {{"command", v.command.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.command)},
          {"source", v.command.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.source)},
          {"others", others},
          {"skipped", skipped}};
}

std::string flow_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& i : items) out += (out.size() > 1 ? ", " : "") + nlohmann::json(i).dump();
  return out + "]";
}

// The detected provisioning written into the default config: sandbox.read_only and sandbox.env
// set, with what init did (and could not know) as comments above `sandbox:`.
void apply_provisioning(std::string& yaml, const Provisioning& p) {
  auto set = [&yaml](const std::string& key, const std::vector<std::string>& items) {
    if (items.empty()) return;
    const std::string empty = "\n  " + key + ": []";
    auto sandbox = yaml.find("\nsandbox:");
    auto at = yaml.find(empty, sandbox == std::string::npos ? 0 : sandbox);
    if (at == std::string::npos) return;
    auto line_end = yaml.find('\n', at + 1);
    std::string old_line = yaml.substr(at + 1, line_end - at - 1);
    std::string line = "  " + key + ": " + flow_list(items);
    if (auto hash = old_line.find('#'); hash != std::string::npos)
      line +=
          std::string(hash > line.size() + 1 ? hash - line.size() : 2, ' ') + old_line.substr(hash);
    yaml.replace(at + 1, line_end - at - 1, line);
  };
  set("read_only", p.read_only);
  set("env", p.env);
  if (p.notes.empty() && p.hints.empty()) return;
  std::string comment;
  for (const auto& n : p.notes) comment += "# loopr init: " + n + "\n";
  for (const auto& h : p.hints) comment += "# loopr init could not tell: " + h + "\n";
  auto sandbox = yaml.find("\nsandbox:");
  if (sandbox != std::string::npos) yaml.insert(sandbox + 1, comment);
}

// The branch HEAD points at (`ref: refs/heads/NAME`), or empty when detached or unreadable.
std::string current_branch(const std::filesystem::path& root) {
  std::filesystem::path git = root / ".git";
  std::error_code ec;
  if (std::filesystem::is_regular_file(git, ec)) {  // a worktree: `gitdir: PATH`
    std::ifstream f(git);
    std::string line;
    std::getline(f, line);
    if (line.rfind("gitdir: ", 0) == 0) git = std::filesystem::path(line.substr(8));
  }
  std::ifstream head(git / "HEAD");
  std::string line;
  std::getline(head, line);
  const std::string prefix = "ref: refs/heads/";
  return line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : std::string();
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out.empty() ? std::string("(none)") : out;
}

// What a loop may not change on its own, and the reviewer (docs/confinement.md "Security model").
void print_protection(std::ostream& out, const Config& config) {
  out << "protected paths (a code loop changes them only where its phase lists them under "
         "`- Files:`):\n  harness"
      << (config.protect.harness ? "" : " (inferred from loops.code.validation)") << ": "
      << joined(harness_patterns(config)) << "\n  existing tests: " << joined(config.protect.tests)
      << "\nheld for `loopr merge` (a tree that changes them is not merged automatically): "
         "loopr's own files ("
      << joined({std::begin(kLooprOwnPatterns), std::end(kLooprOwnPatterns)})
      << "), the harness, and other tools' auto-run files: " << joined(config.protect.hold) << "\n";
  if (config.review.enabled)
    out << "review: on (model "
        << (config.review.model.empty() ? config.llm.model : config.review.model) << ", at most "
        << config.review.max_rounds << " failed reviews per loop before you decide)\n";
  else
    out << "review: off (loops.review.enabled)\n";
}

// What the tests need beyond git (project/provision.hpp), and the toolchain folders the chosen
// command goes through that the sandbox hides (project/toolchains.hpp), each with why.
Provisioning provision_for(const std::filesystem::path& root, ChosenValidation& chosen,
                           bool explicit_command) {
  Provisioning p = project::detect_provisioning(root, chosen.command, process_env());
  if (p.validation && !explicit_command) {
    chosen.command = *p.validation;
    chosen.source += ", run with the virtualenv's python";
  }
  if (chosen.command.empty()) return p;
  for (const auto& t : project::resolve_toolchains(root, chosen.command, process_env())) {
    if (std::find(p.read_only.begin(), p.read_only.end(), t.path) != p.read_only.end()) continue;
    p.read_only.push_back(t.path);
    p.notes.push_back(t.path + " read-only: the test command needs it (" + t.why +
                      ") and the sandbox hides it");
  }
  return p;
}

int print_dry_run(const GlobalOptions& opts, const std::filesystem::path& root,
                  const std::optional<std::string>& validation) {
  ChosenValidation chosen = choose_validation(root, validation, process_env());
  Provisioning p = provision_for(root, chosen, validation.has_value());
  if (opts.json) {
    std::cout << nlohmann::json{{"dry_run", true},
                                {"validation", validation_json(chosen)},
                                {"provisioning",
                                 {{"read_only", p.read_only},
                                  {"env", p.env},
                                  {"notes", p.notes},
                                  {"hints", p.hints}}}}
                     .dump()
              << "\n";
    return kOk;
  }
  std::cout << "test commands found in " << root.string() << " (nothing written):\n";
  for (const auto& s : chosen.skipped)
    std::cout << "  skipped  " << s.candidate.command << " (" << s.candidate.source
              << "): " << s.reason << "\n";
  if (!chosen.command.empty())
    std::cout << "  chosen   " << chosen.command << " (" << chosen.source << ")\n";
  for (const auto& c : chosen.others)
    std::cout << "  also     " << c.command << " (" << c.source << ")\n";
  if (chosen.command.empty()) std::cout << "  none that can run here\n";
  if (!p.read_only.empty()) std::cout << "sandbox.read_only: " << flow_list(p.read_only) << "\n";
  if (!p.env.empty()) std::cout << "sandbox.env: " << flow_list(p.env) << "\n";
  for (const auto& n : p.notes) std::cout << "  " << n << "\n";
  for (const auto& h : p.hints) std::cout << "  could not tell: " << h << "\n";
  return kOk;
}

/// What `loopr init` did, for its report.
struct InitDone {
  std::vector<std::string> done;           ///< one line per change
  std::optional<ChosenValidation> chosen;  ///< set when the config is written now
  std::optional<Provisioning> provision;   ///< with it
};

// .loopr/config.yml: written with the defaults and the test command found, unless it exists (then
// checked against --base and --validation, never overwritten).
void write_config(const RepoPaths& paths, const std::string& base,
                  const std::optional<std::string>& validation, InitDone& d) {
  if (std::filesystem::exists(paths.config_file())) {
    Config config = require_config(paths);  // a bad existing file is reported, never overwritten
    if (!base.empty() && base != config.base_branch)
      throw CommandError{kUsage,
                         ".loopr/config.yml already sets base_branch: " + config.base_branch,
                         "edit base_branch in the file to change it"};
    const std::string& current = config.loop(LoopType::code).validation;
    if (validation && *validation != current)
      throw CommandError{
          kUsage, ".loopr/config.yml already sets loops.code.validation: \"" + current + "\"",
          "edit loops.code.validation in the file to change it"};
  } else {
    std::string branch = base.empty() ? current_branch(paths.root) : base;
    if (branch.empty()) branch = "main";
    d.chosen = choose_validation(paths.root, validation, process_env());
    d.provision = provision_for(paths.root, *d.chosen, validation.has_value());
    std::string yaml = default_config_yaml(branch, d.chosen->command, d.chosen->comment());
    apply_provisioning(yaml, *d.provision);
    std::ofstream out(paths.config_file());
    out << yaml;
    if (!out)
      throw CommandError{kFailed, "cannot write " + paths.config_file().string(),
                         "check the folder's permissions"};
    d.done.push_back("wrote .loopr/config.yml (base branch " + branch + ")");
  }
}

// .gitignore: loopr's runtime folders, the test command's build folder and the tests' caches.
void add_ignores(const RepoPaths& paths, InitDone& d) {
  std::filesystem::path gitignore = paths.root / ".gitignore";
  std::string existing;
  {
    std::ifstream in(gitignore);
    std::ostringstream s;
    s << in.rdbuf();
    existing = s.str();
  }
  std::istringstream lines(existing);
  std::set<std::string> present;
  for (std::string line; std::getline(lines, line);) present.insert(line);
  std::string add;
  for (const char* dir : kIgnoredDirs)
    if (!present.count(dir)) add += std::string(dir) + "\n";
  const bool runtime_dirs_added = !add.empty();
  // The test command's build folder: a code loop's checkpoint must not commit build output.
  std::vector<std::string> build_ignores;
  if (d.chosen)
    for (const auto& dir : d.chosen->build_dirs) {
      auto ignored = git::is_ignored(paths.root, dir);
      if (ignored && *ignored) continue;
      add += "/" + dir + "\n";
      build_ignores.push_back("/" + dir);
    }
  // The tests' own caches (`__pycache__/`): never committed by a code loop's checkpoint.
  std::vector<std::string> cache_ignores;
  if (d.provision)
    for (const auto& pattern : d.provision->ignores)
      if (!present.count(pattern)) {
        add += pattern + "\n";
        cache_ignores.push_back(pattern);
      }
  if (!add.empty()) {
    std::ofstream out(gitignore, std::ios::app);
    if (!existing.empty() && existing.back() != '\n') out << "\n";
    if (!present.count("# loopr")) out << "# loopr\n";
    out << add;
    if (runtime_dirs_added) d.done.push_back("added loopr's runtime folders to .gitignore");
    for (const auto& dir : build_ignores)
      d.done.push_back("added " + dir + " to .gitignore (the test command builds there)");
    for (const auto& pattern : cache_ignores)
      d.done.push_back("added " + pattern + " to .gitignore (the tests write it)");
  }
}

void print_init(const GlobalOptions& opts, const RepoPaths& paths, const InitDone& d) {
  if (opts.json) {
    nlohmann::json doc{{"config", paths.config_file().string()}, {"changed", d.done}};
    if (d.provision)
      doc["provisioning"] = {{"read_only", d.provision->read_only},
                             {"env", d.provision->env},
                             {"notes", d.provision->notes},
                             {"hints", d.provision->hints}};
    if (d.chosen) doc["validation"] = validation_json(*d.chosen);
    if (d.chosen) doc["protect_harness"] = default_harness(d.chosen->command);
    std::cout << doc.dump() << "\n";
  } else if (!opts.quiet) {
    if (d.done.empty()) std::cout << "loopr is already set up in " << paths.root.string() << "\n";
    for (const auto& line : d.done) std::cout << line << "\n";
    if (d.chosen && !d.chosen->command.empty()) {
      std::cout << "test command: " << d.chosen->command << " (from " << d.chosen->source
                << "); loops.code.validation in .loopr/config.yml changes it\n";
      for (const auto& c : d.chosen->others)
        std::cout << "  also found: " << c.command << " (" << c.source << ")\n";
      for (const auto& k : d.chosen->skipped)
        std::cout << "  skipped: " << k.candidate.command << " (" << k.candidate.source
                  << "): " << k.reason << "\n";
      std::cout << "test harness (protect.harness; a code loop changes it only where its phase "
                   "lists it): "
                << joined(default_harness(d.chosen->command)) << "\n";
    } else if (d.chosen) {
      std::cout << "no test command found: put yours in loops.code.validation of "
                   ".loopr/config.yml (`loopr submit` refuses until it is set)\n";
    }

    // What the tests need that git does not hold (project_provision.hpp).
    if (d.provision) {
      for (const auto& n : d.provision->notes) std::cout << "  " << n << "\n";
      for (const auto& h : d.provision->hints) std::cout << "  could not tell: " << h << "\n";
    }
  }
}

}  // namespace

int run_init(Session& s, const std::string& base, const std::optional<std::string>& validation,
             bool dry_run) {
  const GlobalOptions& opts = s.opts;
  const RepoPaths& paths = s.paths();
  if (dry_run) return print_dry_run(opts, paths.root, validation);
  std::error_code ec;
  std::filesystem::create_directories(paths.dot_loopr(), ec);
  if (ec)
    throw CommandError{kFailed, "cannot create " + paths.dot_loopr().string() + ": " + ec.message(),
                       "check the folder's permissions"};
  InitDone d;
  write_config(paths, base, validation, d);
  add_ignores(paths, d);
  print_init(opts, paths, d);
  return kOk;
}

namespace {

// `loopr config --json`: the effective settings a script may read.
nlohmann::json config_json(const RepoPaths& paths, const Config& config, bool exists) {
  return nlohmann::json{
      {"file", paths.config_file().string()},
      {"exists", exists},
      {"base_branch", config.base_branch},
      {"merge", to_string(config.merge)},
      {"provider", config.llm.provider},
      {"model", config.llm.model},
      {"sandbox", config.sandbox.mode},
      {"sandbox_network", config.sandbox.network},
      {"executor", to_string(config.executor.kind)},
      {"worktree_root", config.executor.worktree_root},
      {"protect",
       {{"harness", harness_patterns(config)},
        {"harness_inferred", !config.protect.harness.has_value()},
        {"tests", config.protect.tests},
        {"hold", config.protect.hold},
        {"max_file_size", config.protect.max_file_size},
        {"max_tree_size", config.protect.max_tree_size},
        {"loopr",
         std::vector<std::string>(std::begin(kLooprOwnPatterns), std::end(kLooprOwnPatterns))}}},
      {"review",
       {{"enabled", config.review.enabled},
        {"model", config.review.model.empty() ? config.llm.model : config.review.model},
        {"max_rounds", config.review.max_rounds}}},
      {"needs_restart",
       std::vector<std::string>(std::begin(kRestartKeys), std::end(kRestartKeys))}};
}

}  // namespace

int run_config(Session& s) {
  const GlobalOptions& opts = s.opts;
  const RepoPaths& paths = s.paths();
  const Config& config = s.config();
  bool exists = std::filesystem::exists(paths.config_file());
  if (opts.json) {
    std::cout << config_json(paths, config, exists).dump() << "\n";
  } else if (!opts.quiet) {
    std::cout << (exists ? paths.config_file().string() + " is valid"
                         : std::string("no .loopr/config.yml: using the defaults"))
              << "\nprovider " << config.llm.provider << ", model " << config.llm.model
              << ", base branch " << config.base_branch << ", merge " << to_string(config.merge)
              << "\n";
    if (!config.sandbox.confined()) {
      Style style{stdout_color(opts)};
      std::cout << style.red(style.bold("sandbox: none"))
                << " — the model's commands, the validation and stop "
                << "scripts run UNCONFINED, with your user's files, environment and network\n";
    } else {
      std::string net;
      for (const auto& c : config.sandbox.network) net += (net.empty() ? "" : ", ") + c;
      std::cout << "sandbox: bubblewrap (commands confined to their worktree; network for "
                << (net.empty() ? std::string("no runner class") : "runner classes " + net)
                << ")\n";
    }
    if (config.executor.kind == ExecutorKind::slurm) {
      const SlurmConfig& sl = config.executor.slurm;
      std::cout << "executor: slurm (each command a job step on "
                << (sl.partition.empty() ? std::string("the default partition")
                                         : "partition " + sl.partition)
                << "; worktrees in "
                << (config.executor.worktree_root.empty() ? std::string(".loopr/worktrees")
                                                          : config.executor.worktree_root)
                << ")\n";
    }
    print_protection(std::cout, config);
    std::string restart;
    for (const char* k : kRestartKeys) restart += (restart.empty() ? "" : ", ") + std::string(k);
    std::cout << "a running daemon applies changes on SIGHUP (`kill -HUP $(cat "
                 ".loopr/run/loopr.pid)`), except "
              << restart << ": those need a restart (`loopr daemon stop`, then `loopr daemon`)\n";
  }
  return kOk;
}

namespace {

CommandRun define_init(CLI::App& init) {
  struct Values {
    std::string base, validation;
    bool dry_run = false;
    CLI::Option* validation_opt = nullptr;
  };
  auto v = std::make_shared<Values>();
  init.add_option("--base", v->base,
                  "Base branch the plans' work merges into (default: the current branch)")
      ->option_text("BRANCH");
  v->validation_opt =
      init.add_option("--validation", v->validation,
                      "The command that runs your tests (loops.code.validation); default: found "
                      "from the repository (package.json, Cargo.toml, go.mod, CMakeLists.txt and "
                      "others; see docs/guide.md)")
          ->option_text("CMD");
  init.add_flag("--dry-run", v->dry_run,
                "Only show the test commands found, which ones can run here (and why not), the "
                "choice and the toolchain folders it would show; write nothing");
  return CommandRun([v](Session& s) {
           return run_init(s, v->base,
                           v->validation_opt->count() ? std::optional(v->validation) : std::nullopt,
                           v->dry_run);
         })
      .checked_by([v] {
        if (v->validation_opt->count() &&
            v->validation.find_first_not_of(" \t\r\n") == std::string::npos)
          throw CommandError{
              kUsage, "--validation is empty",
              "give the command that runs your tests, e.g. --validation \"make test\""};
      });
}

CommandRun define_config(CLI::App&) {
  return CommandRun([](Session& s) { return run_config(s); });
}

}  // namespace

const Command kInitCommand{
    "init",
    "Write .loopr/config.yml (commented defaults, and the test command found in the "
    "repository) and ignore loopr's runtime folders in git",
    false, Needs::repo, define_init};
const Command kConfigCommand{
    "config", "Check .loopr/config.yml and print the effective settings (environment applied)",
    false, Needs::config, define_config};

}  // namespace loopr::cli
