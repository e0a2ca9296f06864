// `loopr demo`: everything a first-time user needs to see loopr work, with no network and no
// API key. The model is `loopr-mock-llm` playing a script, so the run is the same every time;
// everything else — daemon, loop tree, gate, worktrees, validation, merges — is the real thing.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include <loopr/core/process.hpp>
#include <loopr/git/repository.hpp>

#include "cli/command.hpp"
#include "cli/daemon_client.hpp"
#include "cli/demo.hpp"
#include "cli/format.hpp"
#include "cli/markdown_render.hpp"
#include "cli/review.hpp"
#include "cli/terminal.hpp"
#include "cli/tree_view.hpp"
#include "cli/wire.hpp"

namespace loopr::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kRequest = "Add a --shout flag to greet";

fs::path self_exe() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

bool is_example_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "mock-model.yml", ec) &&
         fs::is_regular_file(dir / "config.yml", ec) && fs::is_directory(dir / "project", ec);
}

// The example: $LOOPR_EXAMPLE_DIR, else beside the binary (an install's share/loopr/example, or
// a build folder inside the sources), else the sources this binary was built from.
fs::path find_example_dir() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("LOOPR_EXAMPLE_DIR"); env && *env) candidates.emplace_back(env);
  fs::path exe_dir = self_exe().parent_path();
  if (!exe_dir.empty()) {
    candidates.push_back(exe_dir.parent_path() / "share" / "loopr" / "example");
    candidates.push_back(exe_dir.parent_path() / ".loopr-example");
  }
  candidates.push_back(fs::path(LOOPR_SOURCE_DIR) / ".loopr-example");
  for (const auto& c : candidates)
    if (is_example_dir(c)) return fs::absolute(c).lexically_normal();
  throw CommandError{
      kUsage, "the demo's example (mock-model.yml, config.yml, project/) is not where loopr looks",
      "set LOOPR_EXAMPLE_DIR to the .loopr-example folder of the loopr sources"};
}

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// loopr-mock-llm: $LOOPR_MOCK_LLM_BIN, else beside the loopr binary (or in the build tree's
// tools/mock-llm/ under it), else PATH.
fs::path find_mock_llm() {
  if (const char* env = std::getenv("LOOPR_MOCK_LLM_BIN"); env && *env) {
    if (is_executable(env)) return env;
    throw CommandError{kUsage, std::string("LOOPR_MOCK_LLM_BIN is not an executable: ") + env,
                       "point it at the loopr-mock-llm binary, or unset it"};
  }
  fs::path exe_dir = self_exe().parent_path();
  for (const fs::path& p :
       {exe_dir / "loopr-mock-llm", exe_dir / "tools" / "mock-llm" / "loopr-mock-llm"})
    if (is_executable(p)) return p;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && is_executable(fs::path(dir) / "loopr-mock-llm"))
        return fs::path(dir) / "loopr-mock-llm";
  }
  throw CommandError{
      kUsage, "loopr-mock-llm (the scripted model the demo talks to) is not built",
      "build it with `cmake --build build --target loopr-mock-llm`, or set LOOPR_MOCK_LLM_BIN"};
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out)
    throw CommandError{kFailed, "cannot write " + p.string(), "check the free space in $TMPDIR"};
}

// Last lines of a log, for error messages.
std::string tail_of(const fs::path& p, std::size_t lines = 5) {
  std::vector<std::string> all;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += "\n  " + all[i];
  return out;
}

// A git step of the demo (through the git module); a failure ends the demo with its message.
template <typename T>
T git_step(Result<T> r, const std::string& what) {
  if (!r) throw CommandError{kFailed, what + ": " + r.error().message, "see the message"};
  return std::move(*r);
}

git::Repository open_repo(const fs::path& repo) {
  return git_step(git::Repository::open(repo), "opening " + repo.string());
}

// The scripted model: loopr-mock-llm on a free loopback port, in its own process group (Ctrl-C
// reaches only `loopr demo`, which stops everything in order). Stopped by the destructor.
class MockModel {
 public:
  MockModel(const fs::path& bin, const fs::path& script, const fs::path& dir)
      : log_(dir / "mock-llm.out") {
    fs::path port_file = dir / "mock-llm.port";
    // Everything the child needs is made before fork (only async-signal-safe calls after it).
    std::vector<std::string> args = {
        bin.string(),       "--script", script.string(),
        "--port",           "0",        "--port-file",
        port_file.string(), "--log",    (dir / "requests.jsonl").string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || null < 0)
      throw CommandError{kFailed, "cannot create " + log_.string(), "check $TMPDIR"};
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive a demo that crashed
      ::dup2(null, 0);
      ::dup2(out, 1);
      ::dup2(out, 2);
      loopr::close_fds_on_exec();
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(out);
    ::close(null);
    if (pid_ < 0)
      throw CommandError{kFailed, "cannot start loopr-mock-llm (fork failed)", "try again"};

    auto deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw CommandError{kFailed, "loopr-mock-llm stopped at start:" + tail_of(log_),
                           "its output: " + log_.string()};
      }
      std::ifstream in(port_file);
      if (in >> port_ && port_ > 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw CommandError{kFailed, "loopr-mock-llm did not start within 10 s",
                       "its output: " + log_.string()};
  }
  ~MockModel() { stop(); }
  MockModel(const MockModel&) = delete;
  MockModel& operator=(const MockModel&) = delete;

  int port() const { return port_; }
  /// One JSON line per request received (`--log`): what to read when a run goes astray.
  fs::path request_log() const { return log_.parent_path() / "requests.jsonl"; }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    auto deadline = Clock::now() + std::chrono::seconds(3);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
  }

 private:
  fs::path log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// Stops the daemon the demo started: a graceful shutdown, then SIGTERM if it does not go.
class DaemonGuard {
 public:
  DaemonGuard(const DaemonClient& api, long pid) : api_(api), pid_(pid) {}
  ~DaemonGuard() { stop(); }
  DaemonGuard(const DaemonGuard&) = delete;
  DaemonGuard& operator=(const DaemonGuard&) = delete;

  void stop() {
    if (stopped_) return;
    stopped_ = true;
    try {
      api_.post("/v1/shutdown");
    } catch (const CommandError&) {
      // Gone already, or not answering: the signal below settles it.
    }
    auto deadline = Clock::now() + std::chrono::seconds(8);
    while (Clock::now() < deadline) {
      if (pid_ > 0 ? ::kill(static_cast<pid_t>(pid_), 0) != 0
                   : !api_.health(std::chrono::seconds(1)))
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (pid_ > 0) ::kill(static_cast<pid_t>(pid_), SIGTERM);
  }

 private:
  const DaemonClient& api_;
  long pid_;
  bool stopped_ = false;
};

fs::path make_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/loopr-demo-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw CommandError{kFailed,
                       "cannot make a folder under " + std::string(tmp && *tmp ? tmp : "/tmp"),
                       "set TMPDIR to a writable folder"};
  return pattern;
}

// The demo's settings with the mock's address in llm.base_url.
std::string demo_config(const fs::path& example, int port) {
  std::string text = read_text(example / "config.yml");
  static const std::regex base_url(R"((\n[ \t]+base_url:)[^\n]*)");
  std::string url = "http://127.0.0.1:" + std::to_string(port);
  std::string out = std::regex_replace(text, base_url,
                                       "$1 " + url + "   # loopr-mock-llm, started by `loopr demo`",
                                       std::regex_constants::format_first_only);
  if (out == text)
    throw CommandError{kFailed, (example / "config.yml").string() + " has no llm.base_url line",
                       "restore the file"};
  return out;
}

// The model's answers come from the script, whatever the environment says (the environment
// overrides the config file), and no real key is ever sent anywhere.
void isolate_environment() {
  ::setenv("ANTHROPIC_API_KEY", "demo", 1);
  for (const char* name :
       {"ANTHROPIC_BASE_URL", "LOOPR_PROVIDER", "LOOPR_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"})
    ::unsetenv(name);
}

void check_interrupt() {
  if (g_interrupted.load())
    throw CommandError{kInterrupted, "demo interrupted", "nothing is left running"};
}

// One line per event, as `loopr logs` prints them; a tool call shows only what it works on
// (a file's whole content is for `loopr show --iteration`).
std::string event_line(api::TypedEvent e, const Style& style) {
  if (auto* call = std::get_if<api::ToolCalled>(&e.body); call && call->input.is_object()) {
    for (const char* key : {"path", "command", "pattern"}) {
      if (auto it = call->input.find(key); it != call->input.end()) {
        call->input = json{{key, *it}};
        break;
      }
    }
  }
  return format_event_line(e, style);
}

// A status the plan loop stops at for the demo: the gate, or an end.
bool plan_stops_at(LoopStatus s) {
  return s == LoopStatus::awaiting_approval || s == LoopStatus::failed ||
         s == LoopStatus::stopped || s == LoopStatus::complete;
}

// Prints the plan loop's events after `seen` (updated) until it reaches the gate or ends some
// other way; returns the plan's status then (nullopt if the stream ended before).
std::optional<LoopStatus> follow_plan(const DaemonClient& api, const std::string& plan_id,
                                      std::uint64_t& seen, std::ostream& ui, const Style& style,
                                      bool quiet) {
  std::optional<LoopStatus> status;
  auto r = api.stream(
      "/v1/events?since=" + std::to_string(seen) + "&loop=" + url_encode(plan_id),
      [&](const StreamMessage& m) {
        auto e = event_of(m);
        if (!e) return true;
        seen = std::max(seen, e->seq);
        if (!quiet && !std::holds_alternative<api::CostEvent>(e->body))
          ui << "  " << event_line(*e, style) << "\n" << std::flush;
        if (auto* change = std::get_if<api::StatusChanged>(&e->body);
            change && e->loop_id == plan_id && plan_stops_at(change->to)) {
          status = change->to;
          return false;
        }
        return true;
      },
      &g_interrupted);
  check_interrupt();
  if (!r)
    throw CommandError{kDaemonUnreachable,
                       "lost the daemon while the plan was written: " + r.error().message,
                       "its log: " + daemon_out_file(api.paths()).string()};
  return status;
}

// Approves the plan (showing it) with --yes, else asks like `loopr review`. Returns the
// decision: approve | reject | iterate | skip. `prompter` (without --yes) lives across gates:
// it keeps what it read ahead.
Choice gate(const DaemonClient& api, const std::string& plan_id, Prompter* prompter,
            std::ostream& ui, const Style& style, bool quiet) {
  api::LoopRow loop = show_loop(api, plan_id).loop;
  if (prompter) return review_plan(api, loop, *prompter, ui, style).decision;
  if (!quiet) {
    int width = std::min(terminal_width(), 100);
    std::string rule(static_cast<std::size_t>(std::min(width, 72)), '-');
    ui << "\n"
       << style.dim(rule) << "\n"
       << style.bold("Plan " + plan_id)
       << " awaits approval (the gate: `loopr review` asks a person here)\n"
       << style.dim(rule) << "\n\n"
       << render_markdown(read_plan_artifact(api.paths(), loop), style, width) << "\n";
  }
  act_on(api, plan_id, "approve");
  if (!quiet)
    ui << style.green("approved") << " " << plan_id << " (--yes): its specs start now\n\n";
  return Choice::approve;
}

// The loops that needed more than one iteration, with what each iteration said.
void print_retries(const DaemonClient& api, std::ostream& ui, const Style& style) {
  for (const auto& l : list_loops(api)) {
    if (l.iteration < 2) continue;
    api::LoopDetail detail = show_loop(api, l.id);
    ui << style.bold(l.id) << " took " << l.iteration << " iterations:\n";
    for (const auto& it : detail.iterations)
      ui << "  " << it.n << ". " << to_string(it.status) << ": " << it.summary << "\n";
  }
}

// Step 4: submit, watch the plan being written, pass the gate (asked, unless `yes`).
struct Gated {
  std::string plan_id;
  bool approved = false;
  std::optional<LoopStatus> status;  ///< the plan's, when it was not approved
};
Gated submit_and_gate(const DaemonClient& api, const GlobalOptions& opts, bool yes,
                      std::ostream& ui, const Style& style) {
  const bool quiet = opts.quiet;
  Gated g;
  g.plan_id = submit_plan(api, kRequest);
  if (!quiet) ui << "$ loopr submit \"" << kRequest << "\"  →  plan " << g.plan_id << "\n";
  std::uint64_t seen = 0;
  g.status = follow_plan(api, g.plan_id, seen, ui, style, quiet || opts.json);
  std::optional<Prompter> prompter;
  if (!yes) prompter.emplace(STDIN_FILENO, ui);
  while (g.status == LoopStatus::awaiting_approval) {
    const Choice decision =
        gate(api, g.plan_id, prompter ? &*prompter : nullptr, ui, style, quiet || opts.json);
    g.approved = decision == Choice::approve;
    if (decision != Choice::iterate) break;  // approved, rejected, or left waiting (skip, no input)
    g.status = follow_plan(api, g.plan_id, seen, ui, style, quiet || opts.json);
  }
  if (!g.approved) g.status = show_loop(api, g.plan_id).loop.status;
  return g;
}

// Step 6 (daemon and model stopped): what the tree made, or where to look when it did not.
void print_result(const DaemonClient& api, const fs::path& repo, const std::string& base, int rc,
                  std::int64_t elapsed, const MockModel& mock, std::ostream& ui,
                  const Style& style) {
  if (rc == kOk) {
    git::Repository r = open_repo(repo);
    ui << "\n" << style.bold("git log --oneline main") << "\n";
    for (const auto& line : git_step(r.log("main", 40), "reading the log of main"))
      ui << line << "\n";
    ui << "\n" << style.bold("what the tree merged");
    ui << " (git diff --stat " << base.substr(0, 7) << " main)\n";
    ui << git_step(r.diff_stat(base, "main"), "comparing with main");
  }
  ui << "\nrepo: " << repo.string() << "   (" << format_elapsed(elapsed)
     << "; daemon and scripted model stopped)\n";
  if (rc == kOk) {
    ui << "  try:     cd " << repo.string() << " && ./greet --shout Ada && sh tests/run.sh\n";
  } else {
    ui << "  logs:    " << daemon_out_file(api.paths()).parent_path().string() << "\n";
    ui << "  model:   the requests it got are in " << mock.request_log().string() << "\n";
  }
  ui << "  inspect: git log --stat main; .loopr/{plans,specs,phases}/; every iteration's\n"
     << "           prompt, conversation and test output in .loopr/logs/loops/<id>/;\n"
     << "           the tree: loopr -C " << repo.string() << " daemon, then list, show ID\n"
     << "With a real model: in your own repository run `loopr init`, set\n"
     << "loops.code.validation in .loopr/config.yml to your test command, export\n"
     << "ANTHROPIC_API_KEY, then `loopr submit \"<request>\" --wait`.\n";
}

// Steps 4 to 6: submit, the gate, the live tree, then (daemon and model stopped) the result.
int run_tree(const DaemonClient& api, const GlobalOptions& opts, bool yes, const fs::path& repo,
             const std::string& base, Clock::time_point started, DaemonGuard& daemon_guard,
             MockModel& mock) {
  std::ostream& ui = ui_stream(opts);
  const bool quiet = opts.quiet;
  Style style{stdout_color(opts) && !opts.json};
  const Gated g = submit_and_gate(api, opts, yes, ui, style);
  // 5. The tree, live, until it completes and merges into main.
  int rc = kFailed;
  if (g.approved) {
    rc = wait_for_plan(api, opts, g.plan_id, /*yes=*/true);
    if (!quiet && !opts.json) print_retries(api, ui, style);
  } else if (!quiet) {
    ui << "plan " << g.plan_id << " was not approved ("
       << (g.status ? to_string(*g.status) : "its events ended") << "); nothing else runs\n";
  }
  daemon_guard.stop();
  mock.stop();
  // 6. The result.
  auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  if (opts.json) {
    std::string head = git_step(open_repo(repo).branch_sha("main"), "reading main");
    std::cout << json{{"repo", repo.string()},
                      {"plan_id", g.plan_id},
                      {"completed", rc == kOk},
                      {"head", head},
                      {"elapsed_ms", elapsed}}
                     .dump()
              << "\n";
    return rc;
  }
  if (!quiet) print_result(api, repo, base, rc, elapsed, mock, ui, style);
  return rc;
}

}  // namespace

namespace {

// What the demo is, before it starts.
void print_intro(std::ostream& ui, const Style& style, const fs::path& example,
                 const fs::path& repo) {
  ui << style.bold("loopr demo") << ": \"" << kRequest
     << "\" on a tiny shell project, end to end.\n"
     << "The model is " << style.bold("scripted") << ": loopr-mock-llm plays "
     << (example / "mock-model.yml").string()
     << "\n(no network, no API key, nothing billed). Daemon, loop tree, worktrees, tests and "
        "merges are real.\n"
     << "repo: " << repo.string() << "\n\n";
}

}  // namespace

int run_demo(const GlobalOptions& opts, bool yes) {
  install_interrupt_handlers();
  std::ostream& ui = ui_stream(opts);
  const bool quiet = opts.quiet;
  Style style{stdout_color(opts) && !opts.json};
  auto started = Clock::now();

  fs::path example = find_example_dir();
  fs::path mock_bin = find_mock_llm();
  fs::path work = make_temp_dir();
  fs::path repo = work / "greet";
  if (!quiet) print_intro(ui, style, example, repo);

  // 1. The project in a fresh repository, on branch main.
  fs::copy(example / "project", repo, fs::copy_options::recursive);
  git::Repository made = git_step(
      git::Repository::create(repo, "main", git::Identity{"loopr demo", "demo@loopr.invalid"},
                              "greet: a tiny greeting program in POSIX sh, with tests\n"),
      "making the demo repository");
  check_interrupt();

  // 2. The scripted model, and loopr's settings pointing at it.
  MockModel mock(mock_bin, example / "mock-model.yml", work);
  RepoPaths paths(repo);
  fs::create_directories(paths.dot_loopr());
  write_text(paths.config_file(), demo_config(example, mock.port()));
  std::string ignore;
  for (const char* dir : kIgnoredDirs) ignore += std::string(dir) + "\n";
  write_text(repo / ".gitignore", ignore);
  std::string base = git_step(made.main_worktree().checkpoint(
                                  "loopr: settings for the demo (scripted model on 127.0.0.1)"),
                              "committing the demo's settings")
                         .sha;
  check_interrupt();

  // 3. The daemon (its own session: Ctrl-C here stops it through the guard, in order).
  isolate_environment();
  DaemonStart daemon = start_daemon(paths);
  DaemonClient api(paths);
  DaemonGuard daemon_guard(api, daemon.pid);
  if (!quiet)
    ui << "daemon pid " << daemon.pid << ", scripted model on 127.0.0.1:" << mock.port() << "\n";

  try {
    return run_tree(api, opts, yes, repo, base, started, daemon_guard, mock);
  } catch (const CommandError& e) {
    if (e.exit_code != kInterrupted) throw;
    daemon_guard.stop();
    mock.stop();
    throw CommandError{kInterrupted,
                       "demo interrupted; the daemon and the scripted model are stopped",
                       "the repository stays in " + repo.string()};
  }
}

namespace {

CommandRun define_demo(CLI::App& demo) {
  auto yes = std::make_shared<bool>(false);
  demo.add_flag("--yes", *yes, "Approve the plan without asking");
  return CommandRun([yes](Session& s) { return run_demo(s.opts, *yes); });
}

}  // namespace

const Command kDemoCommand{
    "demo",
    "Run the bundled example end to end, offline, with the scripted model (.loopr-example/)", false,
    Needs::nothing, define_demo};

}  // namespace loopr::cli
