// `loopr doctor [--offline]`: is this machine (and this repository) ready for loopr? One line
// per check, ✓ or ✗ with what to do, in the order a new user would fix things. Exit 0 when
// ready, 1 when not.
#include <stdlib.h>
#include <sys/statvfs.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <memory>

#include <loopr/core/loop.hpp>
#include <loopr/core/preflight.hpp>
#include <loopr/core/process.hpp>
#include <loopr/exec/executor.hpp>
#include <loopr/exec/program_check.hpp>
#include <loopr/exec/sandbox_view.hpp>
#include <loopr/git/repository.hpp>
#include <loopr/llm/client.hpp>
#include <loopr/llm/probe.hpp>

#include "cli/command.hpp"
#include "cli/commands.hpp"
#include "cli/daemon_client.hpp"
#include "cli/doctor_forge.hpp"
#include "cli/doctor_tests.hpp"
#include "cli/format.hpp"
#include "cli/terminal.hpp"
#include "cli/wire.hpp"

namespace loopr::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uintmax_t kMinFreeBytes = 1ull << 30;  // worktrees, logs, the store
constexpr auto kProbeTimeout = std::chrono::seconds(5);

struct Check {
  std::string name;
  CheckStatus status = CheckStatus::ok;
  std::string message;
  std::string hint;    ///< what to do (fail only)
  std::string detail;  ///< lines under it (a failing command's output)
};

bool is_failure(const Check& c) { return c.status == CheckStatus::fail; }

Check ok(std::string name, std::string message) {
  return {std::move(name), CheckStatus::ok, std::move(message), {}, {}};
}
Check fail(std::string name, std::string message, std::string hint) {
  return {std::move(name), CheckStatus::fail, std::move(message), std::move(hint), {}};
}
Check skip(std::string name, std::string message) {
  return {std::move(name), CheckStatus::skip, std::move(message), {}, {}};
}

// First line of a command's output, or nullopt when it could not run or failed.
std::optional<std::string> first_line_of(std::vector<std::string> argv,
                                         std::chrono::milliseconds timeout) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = timeout;
  spec.merge_stderr = false;
  ProcessResult r = run_process(spec);
  if (!r.succeeded()) return std::nullopt;
  std::string line = r.output.substr(0, r.output.find('\n'));
  return line;
}

Check check_git() {
  auto version = first_line_of({"git", "--version"}, std::chrono::seconds(5));
  if (!version)
    return fail("git", "git is not installed (or `git --version` failed)",
                "install git: loopr works in git repositories and you review its work with git");
  const std::string prefix = "git version ";
  if (version->rfind(prefix, 0) == 0) version = "git " + version->substr(prefix.size());
  return ok("git", *version);
}

std::string git_state_problem(const fs::path& root) {
  auto repo = git::Repository::open(root);
  return repo ? std::string() : repo.error().message;
}

Check check_repository(const GlobalOptions& opts, std::optional<fs::path>& root) {
  fs::path start = opts.directory.empty() ? fs::current_path() : fs::path(opts.directory);
  root = find_repo_root(start);
  if (!root)
    return fail("repository", "not inside a git repository: " + fs::absolute(start).string(),
                "cd into your project (or pass -C DIR); `git init` makes one");
  if (std::string problem = git_state_problem(*root); !problem.empty()) {
    auto semi = problem.find("; ");
    return fail("repository", problem.substr(0, semi),
                semi == std::string::npos ? "see `git status`" : problem.substr(semi + 2));
  }
  auto branch = git::Repository::open(*root)->current_branch();
  return ok("repository",
            "git repository " + root->string() + (branch ? ", on branch " + *branch : ""));
}

Check check_config(const std::optional<fs::path>& root, std::optional<Config>& config) {
  if (!root) return skip("config", "no repository, so no .loopr/config.yml");
  RepoPaths paths(*root);
  std::error_code ec;
  if (!fs::exists(paths.config_file(), ec))
    return fail("config", "loopr is not set up here: no .loopr/config.yml",
                "run `loopr init` in " + root->string());
  auto loaded = load_config(paths.config_file().string());
  if (!loaded)
    return fail("config", loaded.error().message,
                "fix the file; `loopr init` in an empty repository shows every key");
  config = std::move(loaded).value();
  auto repo = git::Repository::open(*root);
  if (repo) {
    auto has = repo->has_branch(config->base_branch);
    if (has && !*has)
      return fail("config", "the base branch " + config->base_branch + " does not exist",
                  "set base_branch in .loopr/config.yml");
  }
  return ok("config", ".loopr/config.yml is valid (provider " + config->llm.provider + ", model " +
                          config->llm.model + ", base branch " + config->base_branch + ")");
}

// The exec module's own self-test: a trivial command through the executor the daemon would
// make from this config, in a scratch folder outside the repository.
Check check_sandbox(const std::optional<fs::path>& root, const Config& config) {
  if (!config.sandbox.confined())
    return ok("sandbox",
              "OFF (sandbox: none in .loopr/config.yml): the model's commands, the "
              "validation and stop scripts run unconfined");
  std::error_code ec;
  fs::path scratch_base = fs::temp_directory_path(ec);
  std::string pattern = (scratch_base / "loopr-doctor-XXXXXX").string();
  if (ec || !::mkdtemp(pattern.data()))
    return fail("sandbox", "cannot make a scratch folder in " + scratch_base.string(),
                "check TMPDIR and its free space");
  fs::path scratch(pattern);
  exec::ExecutorOptions options{RepoPaths(root ? *root : scratch), process_env()};
  auto executor = exec::make_executor(config.sandbox, options);
  auto tested = exec::self_test(*executor, scratch);
  fs::remove_all(scratch, ec);
  if (tested) {
    // The view, as the sandbox is made from it (docs/security.md, B1): what a command sees.
    Check c = ok("sandbox", executor->info().description);
    c.detail = "what a command sees (everything else is not there):\n" +
               exec::format_view(
                   exec::describe_sandbox_view(config.sandbox, options, "/<the loop's worktree>"));
    return c;
  }
  // The executor's words are "what: what to do" (or "what (detail): what to do").
  const std::string& problem = tested.error().message;
  auto cut = problem.find("): ");
  cut = cut == std::string::npos ? problem.find(": ") : cut + 1;
  if (cut == std::string::npos)
    return fail("sandbox", problem, "see docs/confinement.md, or `sandbox: none`");
  return fail("sandbox", problem.substr(0, cut), problem.substr(cut + 2));
}

// What an agent CLI authenticates with: a key, the person's login (and when its token
// expires), or a gateway; `ok` false with what to do when it has none it can use.
struct Auth {
  bool ok = false;
  std::string words, hint;
};

Auth cli_auth(const Config& config) {
  const std::string& p = config.llm.provider;
  const auto env = process_env();
  const std::string relogin = p == "codex"    ? "run `codex login`"
                              : p == "gemini" ? "run `gemini` and log in with Google"
                                              : "run `claude` and log in (/login)";
  if (!llm::runs_on_login(config, p, env)) {
    const std::vector<const char*> keys =
        p == "codex"    ? std::vector<const char*>{"OPENAI_API_KEY"}
        : p == "gemini" ? std::vector<const char*>{"GEMINI_API_KEY", "GOOGLE_API_KEY"}
                        : std::vector<const char*>{"ANTHROPIC_API_KEY"};
    for (const char* k : keys)
      if (auto v = env(k); v && !v->empty()) return {true, std::string(k) + " is set", {}};
    return {true, "gateway " + config.llm.base_url, {}};
  }
  llm::LoginInfo login = llm::inspect_login(p, env("HOME").value_or(""));
  if (login.present && !login.well_formed && !login.api_key)
    return {false, p + ": " + login.problem, relogin};
  if (login.api_key) return {true, "an API key in " + login.path, {}};
  if (login.well_formed) {
    std::string words = "logged in (" + login.path + ")";
    if (login.expires_ms && *login.expires_ms > now_ms())
      words += ", its token valid until " + format_timestamp(*login.expires_ms);
    else if (login.expires_ms)
      words += ", its token expired at " + format_timestamp(*login.expires_ms) +
               " (the CLI refreshes it on its next run; loopr keeps the refreshed login)";
    return {true, words, {}};
  }
  if (!config.llm.base_url.empty()) return {true, "gateway " + config.llm.base_url, {}};
  const std::string key = p == "codex"    ? "OPENAI_API_KEY"
                          : p == "gemini" ? "GEMINI_API_KEY"
                                          : "ANTHROPIC_API_KEY";
  return {false, p + ": no key and no login", "export " + key + "=…, or " + relogin};
}

// claude-code, codex and gemini: the CLI, its version, and a key or a login it can use.
Check check_agent_cli(const Config& config) {
  const std::string& p = config.llm.provider;
  const std::string& command = p == "codex"    ? config.llm.codex.command
                               : p == "gemini" ? config.llm.gemini.command
                                               : config.llm.claude_code.command;
  std::error_code ec;
  auto path = find_program(command, process_env()("PATH").value_or(""), fs::current_path(ec));
  auto version = first_line_of({command, "--version"}, std::chrono::seconds(20));
  if (!version)
    return fail("provider", "`" + command + " --version` failed",
                std::string("run it yourself to see why; reinstall ") +
                    (p == "codex"    ? "Codex CLI (npm install -g @openai/codex)"
                     : p == "gemini" ? "Gemini CLI (npm install -g @google/gemini-cli)"
                                     : "Claude Code if it does not start"));
  Auth auth = cli_auth(config);
  if (!auth.ok) return fail("provider", auth.words, auth.hint);
  return ok("provider",
            p + ": " + (path ? path->string() : command) + " (" + *version + "), " + auth.words);
}

Check check_provider_setup(const Config& config) {
  if (auto p = check_provider(config, process_env())) return fail("provider", p->what, p->hint);
  const auto& llm = config.llm;
  if (llm.provider == "claude-code" || llm.provider == "codex" || llm.provider == "gemini")
    return check_agent_cli(config);
  std::string var = llm.provider == "openai" || llm.provider == "openai-responses"
                        ? "OPENAI_API_KEY"
                        : "ANTHROPIC_API_KEY";
  auto key = process_env()(var.c_str());
  if (key && !key->empty()) return ok("provider", llm.provider + ": " + var + " is set");
  return ok("provider",
            llm.provider + ": no key needed for the local server " + effective_base_url(config));
}

Check check_validation(const std::optional<fs::path>& root, const std::optional<Config>& config) {
  if (!config) return skip("validation", "no .loopr/config.yml, so no test command");
  if (auto p = check_validation_command(*config, *root, process_env()))
    return fail("validation", p->what, p->hint);
  if (auto p = exec::check_validation_in_sandbox(*config, RepoPaths(*root), process_env()))
    return fail("validation", p->what, p->hint);
  return ok("validation", "test command `" + config->loop(LoopType::code).validation +
                              "`: its programs are installed");
}

Check check_endpoint(const Config& config, bool offline) {
  if (offline) return skip("endpoint", "not asked (--offline)");
  const std::string& p = config.llm.provider;
  // An agent CLI on a login sends its own token, which the probe does not carry: a refusal is
  // an answer (the endpoint is there).
  const bool login = (p == "claude-code" || p == "codex" || p == "gemini") &&
                     llm::runs_on_login(config, p, process_env());
  auto probe = llm::probe_endpoint(config, process_env(), kProbeTimeout);
  if (!probe.answered)
    return fail("endpoint", "cannot reach " + probe.url + ": " + probe.failure,
                "check the network and llm.base_url; `--offline` skips this check");
  std::string answered = probe.url + " answered HTTP " + std::to_string(probe.status) + " in " +
                         std::to_string(probe.elapsed.count()) + " ms";
  if (login)  // its token is the CLI's to send: an answer at all is what is asked
    return ok("endpoint", answered + " (" + p + " on its login: reachable)");
  if (probe.status == 401 || probe.status == 403) {
    std::string var = p == "anthropic" || p == "claude-code" ? "ANTHROPIC_API_KEY"
                      : p == "gemini"                        ? "GEMINI_API_KEY"
                                                             : "OPENAI_API_KEY";
    return fail(
        "endpoint", answered + ": the key was refused",
        "check " + var +
            (config.llm.provider == "anthropic" ? " and llm.auth_header (bearer or x-api-key)"
                                                : ""));
  }
  return ok("endpoint", answered);
}

// `config` as another provider sees it (llm/factory.cpp config_for_provider): its base URL
// from its own variable (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, …), else llm.base_url.
Config for_provider(const Config& config, const std::string& provider) {
  Config c = config;
  c.llm.provider = provider;
  if (auto u = process_env()(base_url_variable(provider)); u && !u->empty()) c.llm.base_url = *u;
  return c;
}

Check renamed(Check c, std::string name) {
  c.name = std::move(name);
  return c;
}

std::string human_bytes(std::uintmax_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30))
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  else
    std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(bytes) / (1ull << 20));
  return buf;
}

Check check_disk(const std::optional<fs::path>& root) {
  fs::path where = root ? *root : fs::current_path();
  struct statvfs st {};
  if (::statvfs(where.c_str(), &st) != 0)
    return fail("disk", "cannot read the free space of " + where.string(),
                "check that the folder exists");
  std::uintmax_t free_bytes = static_cast<std::uintmax_t>(st.f_bavail) * st.f_frsize;
  if (free_bytes < kMinFreeBytes)
    return fail("disk", "only " + human_bytes(free_bytes) + " free in " + where.string(),
                "free at least " + human_bytes(kMinFreeBytes) +
                    ": every loop works in a worktree of its own under .loopr/worktrees/");
  return ok("disk", human_bytes(free_bytes) + " free for worktrees in " + where.string());
}

Check check_daemon(const std::optional<fs::path>& root) {
  if (!root) return skip("daemon", "no repository, so no daemon");
  RepoPaths paths(*root);
  DaemonClient api(paths);
  if (auto h = api.health(std::chrono::seconds(2))) {
    auto total = h->loops.find(api::kTotal);
    const int loops = total == h->loops.end() ? 0 : total->second;
    // limits.min_free_space: the daemon's last look at the disk.
    if (h->disk && (h->disk->full || h->disk->paused_loops > 0))
      return fail("daemon",
                  "running, but disk full: " + std::to_string(h->disk->free_mib) + " MiB free in " +
                      h->disk->dir + "; " + std::to_string(h->disk->paused_loops) +
                      " loops paused for want of space (limits.min_free_space " +
                      std::to_string(h->disk->min_free_mib) + " MiB)",
                  "free space (e.g. `loopr gc`): the paused loops resume by themselves");
    return ok("daemon", "running (pid " + std::to_string(h->pid) + ", up " +
                            format_elapsed(h->uptime_s * 1000) + ", " + std::to_string(loops) +
                            " loops)");
  }
  long pid = 0;
  std::ifstream(paths.pid_file()) >> pid;
  if (pid > 0 && process_alive(pid))
    return fail("daemon", "the daemon (pid " + std::to_string(pid) + ") does not answer",
                "see .loopr/logs/daemon.out; `kill " + std::to_string(pid) +
                    "` ends it and the next `loopr daemon` takes over");
  return ok("daemon", "not running (`loopr submit` or `loopr daemon` starts it)");
}

Check check_tests(const std::optional<fs::path>& root, const std::optional<Config>& config,
                  const std::vector<Check>& before, bool skip_tests) {
  if (skip_tests) return skip("tests", "not asked (--skip-tests)");
  if (!root || !config) return skip("tests", "no .loopr/config.yml, so no tests to run");
  for (const auto& c : before)
    if (c.status == CheckStatus::fail &&
        (c.name == "validation" || c.name == "sandbox" || c.name == "config"))
      return skip("tests", "not run: fix the " + c.name + " check first");
  TestsCheck t = check_tests_in_worktree(*root, *config);
  return {"tests", t.status, t.message, t.hint, t.detail};
}

// An ok check's detail (the sandbox's view), each line under it.
std::string indent(const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out += "    " + text.substr(pos, nl - pos) + "\n";
    pos = nl + 1;
  }
  return out;
}

}  // namespace

namespace {

// The checks' report: one line each (✓ ✗ -) and the verdict, or (--json) one document; with -q
// only the failures. True when none failed.
bool print_checks(const GlobalOptions& opts, const std::vector<Check>& checks) {
  bool ready =
      std::none_of(checks.begin(), checks.end(), [](const Check& c) { return is_failure(c); });
  if (opts.json) {
    json list = json::array();
    for (const auto& c : checks) {
      json item{{"name", c.name}, {"status", to_string(c.status)}, {"message", c.message}};
      if (!c.hint.empty()) item["hint"] = c.hint;
      if (!c.detail.empty()) item["detail"] = c.detail;
      list.push_back(std::move(item));
    }
    std::cout << json{{"ready", ready}, {"checks", list}}.dump() << "\n";
  } else if (opts.quiet) {
    for (const auto& c : checks)
      if (is_failure(c)) report(CommandError{kFailed, c.message, c.hint});
  } else {
    Style style{stdout_color(opts)};
    for (const auto& c : checks) {
      if (c.status == CheckStatus::ok)
        std::cout << style.green("✓") << " " << c.name << ": " << c.message << "\n"
                  << indent(c.detail);
      else if (is_failure(c))
        std::cout << style.red("✗") << " " << c.name << ": " << c.message << " (" << c.hint << ")\n"
                  << c.detail;
      else
        std::cout << style.dim("-") << " " << c.name << ": " << style.dim(c.message) << "\n";
    }
    std::size_t failed = static_cast<std::size_t>(
        std::count_if(checks.begin(), checks.end(), [](const Check& c) { return is_failure(c); }));
    if (ready)
      std::cout << "ready\n";
    else
      std::cout << "not ready: " << failed << (failed == 1 ? " problem" : " problems")
                << " to fix\n";
  }
  return ready;
}

}  // namespace

int run_doctor(const GlobalOptions& opts, bool offline, bool skip_tests) {
  std::vector<Check> checks;
  std::optional<fs::path> root;
  std::optional<Config> config;
  checks.push_back(check_git());
  checks.push_back(check_repository(opts, root));
  checks.push_back(check_config(root, config));
  // Outside a set-up repository, the other checks use the defaults and the environment.
  Config effective = config ? *config : Config{};
  if (!config) (void)apply_env(effective, process_env());
  checks.push_back(check_sandbox(root, effective));
  checks.push_back(check_provider_setup(effective));
  // The providers loops.<type>.provider (review, integration) name besides llm.provider.
  std::vector<Config> others;
  for (const std::string& p : llm::providers_in_use(effective))
    if (p != effective.llm.provider) others.push_back(for_provider(effective, p));
  for (const Config& c : others)
    checks.push_back(renamed(check_provider_setup(c), "provider (" + c.llm.provider + ")"));
  checks.push_back(check_validation(root, config));
  checks.push_back(check_tests(root, config, checks, skip_tests));
  checks.push_back(check_endpoint(effective, offline));
  for (const Config& c : others)
    checks.push_back(renamed(check_endpoint(c, offline), "endpoint (" + c.llm.provider + ")"));
  if (root && config)  // merge: pr: the remote, the token's variable, the forge's API
    for (ForgeCheck& f : check_forge(*root, *config, offline))
      checks.push_back({f.name, f.status, f.message, f.hint, {}});
  checks.push_back(check_disk(root));
  checks.push_back(check_daemon(root));

  return print_checks(opts, checks) ? kOk : kFailed;
}

namespace {

CommandRun define_doctor(CLI::App& doctor) {
  struct Values {
    bool offline = false, skip_tests = false;
  };
  auto v = std::make_shared<Values>();
  doctor.add_flag("--offline", v->offline,
                  "Do not send the request that checks the model endpoint");
  doctor.add_flag("--skip-tests", v->skip_tests,
                  "Do not run the setup and the tests in a fresh worktree of the base branch");
  return CommandRun([v](Session& s) { return run_doctor(s.opts, v->offline, v->skip_tests); });
}

}  // namespace

const Command kDoctorCommand{
    "doctor",
    "Check that this machine and repository are ready: git, config, sandbox, the model "
    "provider's key or CLI, the test command, the model endpoint, disk space, the daemon, and "
    "the tests in a fresh worktree of the base branch (exit 1 if not)",
    false, Needs::nothing, define_doctor};

}  // namespace loopr::cli
