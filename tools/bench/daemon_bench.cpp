// daemon_bench: the whole daemon at scale against loopr-mock-llm. Prints figures as Markdown
// table rows (`| figure | value | how |`) that tools/bench/run.sh gathers; asserts nothing.
//
//   daemon_bench scale N [--iterations 3] [--latency-ms 200] [--calls 2] [--files 20]
//                        [--loopr BIN] [--mock BIN] [--sandbox bubblewrap|none]
//       N code loops (below 10, or a multiple of 10), seeded into the store as the pending
//       children of one plan tree (10 specs, N/10 phases each, all complete), then the daemon is
//       started and every code loop runs `iterations` iterations of `calls` model calls
//       (validation `test "$LOOPR_ITERATION" -ge ITERATIONS`). llm_slots and max_loops are N,
//       the request rate 1,000,000/min: the model latency is the only limit. Also times
//       `loopr list --json` and GET /v1/loops on the resulting store. See RESULTS.md.
//   daemon_bench recovery N [--pending P] [--loopr BIN] [--mock BIN]
//       N loops in the store (100-loop plan trees, complete; P pending code loops in 5 trees
//       still in progress), then the time from exec of the daemon to GET /v1/health answering.
//   daemon_bench serve REPO      (internal: runs the daemon in this process when no loopr binary)
//
// The daemon is `loopr -C REPO daemon --foreground` (the real binary, next to the build's
// tools/ folder) unless --loopr says otherwise.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <loopr/core/ids.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/daemon/daemon.hpp>
#include <loopr/daemon/http.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/store/task_store.hpp>

using namespace loopr;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

void run(const std::string& command) {
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "daemon_bench: failed: %s\n", command.c_str());
    std::exit(1);
  }
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

template <typename T>
T must(Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "daemon_bench: %s: %s\n", what, r.error().message.c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

void row(const std::string& figure, const std::string& value, const std::string& how = "") {
  std::printf("| %s | %s | %s |\n", figure.c_str(), value.c_str(), how.c_str());
  std::fflush(stdout);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

double pct(std::vector<double> xs, double p) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  return xs[std::min(xs.size() - 1, static_cast<std::size_t>(p * static_cast<double>(xs.size())))];
}

// ------------------------------------------------------------------ /proc

struct ProcStats {
  double cpu_s = 0;           ///< utime + stime of the process itself
  double children_cpu_s = 0;  ///< of its reaped children (validation commands, git CLI)
  long hwm_kb = 0;            ///< VmHWM: peak resident set
  long rss_kb = 0;
};

ProcStats proc_stats(pid_t pid) {
  ProcStats s;
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close != std::string::npos) {
    std::istringstream in(stat.substr(close + 2));
    std::vector<std::string> f;
    for (std::string x; in >> x;) f.push_back(x);
    // Fields after the command: state(3) … utime(14) stime(15) cutime(16) cstime(17); f[0] is
    // field 3.
    double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
    if (f.size() > 14) {
      s.cpu_s = (std::stod(f[11]) + std::stod(f[12])) / tick;
      s.children_cpu_s = (std::stod(f[13]) + std::stod(f[14])) / tick;
    }
  }
  std::istringstream status(read_file("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) s.hwm_kb = std::atol(line.c_str() + 6);
    if (line.rfind("VmRSS:", 0) == 0) s.rss_kb = std::atol(line.c_str() + 6);
  }
  return s;
}

// ------------------------------------------------------------------ processes

struct Binaries {
  std::string loopr;  ///< empty: this executable's `serve`
  std::string mock;
  std::string self;
};

pid_t spawn(const std::vector<std::string>& argv, const fs::path& out,
            const std::vector<std::string>& env_set = {}) {
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    FILE* f = std::fopen(out.c_str(), "a");
    if (f) {
      dup2(fileno(f), 1);
      dup2(fileno(f), 2);
    }
    for (const char* v :
         {"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "LOOPR_PROVIDER", "LOOPR_MODEL", "LOOPR_LOG"})
      unsetenv(v);
    for (const auto& kv : env_set) putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

struct Mock {
  pid_t pid = -1;
  int port = 0;
};

Mock start_mock(const Binaries& bin, const fs::path& dir, const std::string& script,
                int latency_ms) {
  write_file(dir / "mock.yml", script);
  fs::remove(dir / "mock.port");
  Mock m;
  m.pid = spawn({bin.mock, "--script", (dir / "mock.yml").string(), "--port-file",
                 (dir / "mock.port").string(), "--latency", std::to_string(latency_ms) + "ms"},
                dir / "mock.out");
  auto t = Clock::now();
  while (!fs::exists(dir / "mock.port") && ms_since(t) < 20000)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::ifstream(dir / "mock.port") >> m.port;
  if (m.port == 0) {
    std::fprintf(stderr, "daemon_bench: the mock did not start: %s\n",
                 read_file(dir / "mock.out").c_str());
    std::exit(1);
  }
  return m;
}

void stop(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

pid_t start_daemon(const Binaries& bin, const fs::path& repo, const fs::path& out) {
  std::vector<std::string> argv =
      bin.loopr.empty()
          ? std::vector<std::string>{bin.self, "serve", repo.string()}
          : std::vector<std::string>{bin.loopr, "-C", repo.string(), "daemon", "--foreground"};
  return spawn(argv, out, {"ANTHROPIC_API_KEY=bench-key"});
}

// Polls GET /v1/health until it answers 200; returns its body (null on timeout or daemon exit).
nlohmann::json wait_health(const fs::path& repo, pid_t daemon, double timeout_ms) {
  daemon::Client client(RepoPaths(repo).socket());
  auto t = Clock::now();
  while (ms_since(t) < timeout_ms) {
    auto r = client.call("GET", "/v1/health", nullptr, std::chrono::seconds(30));
    if (r && r->status == 200) return r->body;
    if (::waitpid(daemon, nullptr, WNOHANG) == daemon) return nullptr;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return nullptr;
}

// Deletes a run's folder, or keeps it (and says where) with LOOPR_BENCH_KEEP set.
void remove_unless_kept(const fs::path& dir) {
  std::error_code ec;
  if (!std::getenv("LOOPR_BENCH_KEEP"))
    fs::remove_all(dir, ec);
  else
    std::fprintf(stderr, "kept %s\n", dir.c_str());
}

// The daemon started on `repo` and its first health answer.
struct Started {
  Clock::time_point t0;  ///< just before the exec
  TimestampMs exec_ms = 0;
  pid_t pid = -1;
  nlohmann::json health;  ///< null when it never answered (its output is printed then)
  double health_ms = 0;   ///< exec → first health answer
};

Started start_and_wait(const Binaries& bin, const fs::path& repo, const fs::path& dir,
                       double timeout_ms) {
  Started s;
  s.t0 = Clock::now();
  s.exec_ms = now_ms();
  s.pid = start_daemon(bin, repo, dir / "daemon.out");
  s.health = wait_health(repo, s.pid, timeout_ms);
  s.health_ms = ms_since(s.t0);
  if (s.health.is_null()) {
    std::fprintf(stderr, "daemon_bench: the daemon did not answer: %s\n",
                 read_file(dir / "daemon.out").c_str());
  }
  return s;
}

// ------------------------------------------------------------------ repository and store

// A small repository: `files` source files, the phase artifact every code loop reads, and
// .gitignore for loopr's runtime folders.
void make_repo(const fs::path& repo, int files) {
  fs::create_directories(repo);
  for (int i = 0; i < files; ++i)
    write_file(repo / "src" / ("file" + std::to_string(i) + ".c"),
               "int f" + std::to_string(i) + "(void) { return " + std::to_string(i) + "; }\n");
  write_file(
      repo / ".loopr/phases/bench.md",
      "# Phase bench\n\n## Parent Spec\nThe spec.\n\n## Task\nWrite the work file.\n\n"
      "## Specific Work\n- Write it.\n\n## Success Criteria\n- The validation command passes.\n");
  write_file(repo / ".gitignore",
             ".loopr/state/\n.loopr/run/\n.loopr/worktrees/\n.loopr/archive/\n.loopr/logs/\n");
  run("cd " + repo.string() +
      " && git init -q -b main . && git config user.name bench && git config user.email b@b && "
      "git add -A && git commit -qm init");
}

/// `sandbox:` of the benched daemon (`--sandbox none` measures what confinement costs).
std::string g_sandbox = "bubblewrap";

// A code loop's validation: fails until its ITERATIONS-th iteration. The integration gate runs
// it on the finished tree's tip (no iteration there: LOOPR_LOOP_TYPE=integration), where it passes.
std::string validation_for(int iterations) {
  return "[ \"$LOOPR_LOOP_TYPE\" = integration ] || test \"$LOOPR_ITERATION\" -ge " +
         std::to_string(iterations);
}

void write_config(const fs::path& repo, int port, int loops, int iterations) {
  int width = std::max(16, loops);
  std::string yaml =
      "base_branch: main\nmerge: auto\n"
      "llm:\n  provider: anthropic\n  model: claude-sonnet-5-5\n  base_url: http://127.0.0.1:" +
      std::to_string(port) +
      "\n  max_retries: 3\n"
      "concurrency:\n  max_loops: " +
      std::to_string(width) + "\n  llm_slots: " + std::to_string(width) +
      "\n  requests_per_minute: 1000000\n"
      "limits:\n  max_cost_usd: 0\n  no_progress_iterations: 50\n"
      "loops:\n  code: {max_iterations: " +
      std::to_string(iterations + 2) + ", validation: '" + validation_for(iterations) +
      "', iteration_timeout: 10m}\nsandbox: " + g_sandbox + "\n";
  write_file(repo / ".loopr/config.yml", yaml);
}

std::string mock_script(int calls) {
  std::string s =
      "defaults:\n  usage: {input_tokens: 100, output_tokens: 20}\n  thinking: false\nrules:\n";
  if (calls <= 1)
    return s + "  - name: code\n    match: {loop_type: code}\n    reply: {text: \"Done.\"}\n";
  return s +
         "  - name: finish\n    match: {turn: 2}\n    reply: {text: \"Done.\"}\n"
         "  - name: code\n    match: {loop_type: code}\n    per_loop: true\n    reply:\n"
         "      tool_use: {name: write_file, input: {path: \"work/{{loop_id}}.txt\", content: "
         "\"iteration {{n}}\\n\"}}\n";
}

Loop done_loop(std::string id, LoopType type, std::string parent, std::string plan, int index,
               bool tree_done) {
  Loop l;
  l.id = std::move(id);
  l.type = type;
  l.parent_id = std::move(parent);
  l.plan_id = std::move(plan);
  l.index = index;
  l.task = "Item " + std::to_string(index) + " of " + l.parent_id +
           ": write the part it names, with its tests";
  l.prompt_template = to_string(type);
  if (type != LoopType::code)
    l.output_artifacts = {artifact_path(type, l.id, "item " + std::to_string(index))};
  if (type != LoopType::plan) l.input_artifact = ".loopr/phases/bench.md";
  l.max_iterations = 5;
  l.branch = git::loop_branch(l.plan_id, l.id);
  l.iteration = 2;
  l.status = LoopStatus::complete;
  l.status_reason = "validation passed";
  l.usage = Usage{24000, 3000, 0, 0, 0.12};
  // What a finished loop carries: the feedback of its failed first iteration, the merge marks.
  engine::add_feedback(
      l.run, engine::FeedbackEntry{
                 1, FeedbackSource::validation, "`sh tests/run.sh` failed with exit code 1",
                 "The validation command failed with exit code 1. Its output:\n\n```\n" +
                     std::string(600, 'x') + "\n```\n"});
  l.progress = engine::render_feedback(l.run.feedback, 16 * 1024);
  l.tree.merged_iteration = 2;
  l.tree.merged_sha = std::string(40, 'a');
  l.tree.based_on = std::string(40, 'b');
  l.run.head = std::string(40, 'c');
  if (type != LoopType::code) l.tree.spawned_iteration = 2;
  if (type == LoopType::plan) {
    l.tree.base_branch = "main";
    l.tree.integration_generation = 0;
    if (tree_done) {
      l.tree.tree_complete = true;
      l.tree.merged_into_base = std::string(40, 'd');
    }
  }
  return l;
}

Loop pending_code(const std::string& phase, const std::string& plan, int max_iterations,
                  const std::string& validation) {
  Loop l;
  l.id = child_id(phase, LoopType::code, 1);
  l.type = LoopType::code;
  l.parent_id = phase;
  l.plan_id = plan;
  l.index = 1;
  l.task = "Write the work file of " + phase;
  l.input_artifact = ".loopr/phases/bench.md";
  l.prompt_template = "code";
  l.validation_command = validation;
  l.max_iterations = max_iterations;
  l.status = LoopStatus::pending;
  return l;
}

// One plan tree: the plan, `specs` specs, `phases` phases per spec (all complete), and one
// code loop per phase: complete when `code_done(k)` says so (k counts the tree's code loops), else
// pending.
void seed_tree(WriteSet& set, int plan_number, int specs, int phases, bool tree_done,
               const std::function<bool(int)>& code_done, int max_iterations,
               const std::string& validation) {
  std::string plan = plan_id(plan_number);
  set.creates.push_back(done_loop(plan, LoopType::plan, "", plan, 0, tree_done));
  int k = 0;
  for (int s = 1; s <= specs; ++s) {
    std::string spec = child_id(plan, LoopType::spec, s);
    set.creates.push_back(done_loop(spec, LoopType::spec, plan, plan, s, tree_done));
    for (int p = 1; p <= phases; ++p, ++k) {
      std::string phase = child_id(spec, LoopType::phase, p);
      set.creates.push_back(done_loop(phase, LoopType::phase, spec, plan, p, tree_done));
      if (code_done(k)) {
        Loop c = done_loop(child_id(phase, LoopType::code, 1), LoopType::code, phase, plan, 1,
                           tree_done);
        c.validation_command = validation;
        for (int n = 1; n <= 2; ++n) {
          IterationRecord r;
          r.loop_id = c.id;
          r.n = n;
          r.status = n == 2 ? IterationOutcome::passed : IterationOutcome::failed;
          r.exit_code = n == 2 ? 0 : 1;
          r.duration_ms = 31000;
          r.summary =
              n == 2 ? "`sh tests/run.sh` passed" : "`sh tests/run.sh` failed with exit code 1";
          r.output_excerpt = std::string(800, 'o');
          r.details.turns = 4;
          r.details.tool_calls = 6;
          r.details.model_ms = 29000;
          r.details.validation_ms = 1500;
          set.iterations.push_back(r);
        }
        set.creates.push_back(std::move(c));
      } else {
        set.creates.push_back(pending_code(phase, plan, max_iterations, validation));
      }
    }
  }
}

std::string daemon_log_line(const fs::path& repo, const std::string& needle) {
  std::istringstream in(read_file(RepoPaths(repo).logs_dir() / "daemon.log"));
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) return line;
  return {};
}

std::string main_sha(const fs::path& repo) {
  FILE* p = popen(("git -C " + repo.string() + " rev-parse main 2>/dev/null").c_str(), "r");
  char buf[128] = {};
  if (p) {
    if (!std::fgets(buf, sizeof buf, p)) buf[0] = 0;
    pclose(p);
  }
  return buf;
}

// The time of a daemon.log line (`2026-11-21T13:05:23.457 info …`, local time) as epoch ms.
TimestampMs log_time(const std::string& line) {
  std::tm tm{};
  std::istringstream in(line.substr(0, 19));
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail() || line.size() < 23) return 0;
  tm.tm_isdst = -1;
  return static_cast<TimestampMs>(std::mktime(&tm)) * 1000 + std::atoi(line.substr(20, 3).c_str());
}

int count_errors(const fs::path& repo) {
  std::istringstream in(read_file(RepoPaths(repo).logs_dir() / "daemon.log"));
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find("[error]") != std::string::npos;
  return n;
}

// ------------------------------------------------------------------ scale

int scale(const Binaries& bin, int n, int iterations, int latency_ms, int calls, int files) {
  std::string tmpl = (fs::temp_directory_path() / "loopr-daemon-bench-XXXXXX").string();
  fs::path dir = mkdtemp(tmpl.data());
  fs::path repo = dir / "repo";
  make_repo(repo, files);
  Mock mock = start_mock(bin, dir, mock_script(calls), latency_ms);
  write_config(repo, mock.port, n, iterations);
  const std::string validation = validation_for(iterations);

  // Idle daemon (empty store) for the RSS baseline.
  long idle_kb = 0;
  {
    fs::path empty = dir / "empty";
    make_repo(empty, files);
    write_config(empty, mock.port, n, iterations);
    pid_t d = start_daemon(bin, empty, dir / "empty-daemon.out");
    if (!wait_health(empty, d, 30000).is_null()) idle_kb = proc_stats(d).hwm_kb;
    stop(d);
  }

  // The tree: 10 specs × n/10 phases (one phase per spec below 10), each phase's code loop pending.
  int specs = n >= 10 ? 10 : n, phases = n >= 10 ? n / 10 : 1;
  int total_code = specs * phases;
  {
    auto store = must(TaskStore::open(RepoPaths(repo).state_dir().string(), {.sync = false}),
                      "open the store");
    WriteSet set;
    seed_tree(
        set, 1, specs, phases, false, [](int) { return false; }, iterations + 2, validation);
    must(store->apply(std::move(set)), "seed");
    must(store->next_plan_number(), "plan counter");
  }
  run("git -C " + repo.string() + " branch " + git::integration_branch("001") + " main");
  const int total_loops = 1 + specs + specs * phases + total_code;

  const std::string main_before = main_sha(repo);
  ProcStats mock_before = proc_stats(mock.pid);
  const Started started = start_and_wait(bin, repo, dir, 1200e3);
  if (started.health.is_null()) return 1;
  const auto t0 = started.t0;
  const TimestampMs exec_ms = started.exec_ms;
  const pid_t d = started.pid;
  const double health_ms = started.health_ms;
  ProcStats at_start = proc_stats(d);
  // Done when every code loop is complete or failed and the tree was merged into main (or it
  // failed).
  daemon::Client client(RepoPaths(repo).socket());
  bool done = false;
  double last_report = 0;
  const double timeout_ms = 1800e3;
  while (!done && ms_since(t0) < timeout_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (::waitpid(d, nullptr, WNOHANG) == d) {
      std::fprintf(stderr, "daemon_bench: the daemon exited: %s\n",
                   read_file(dir / "daemon.out").c_str());
      return 1;
    }
    auto h = client.call("GET", "/v1/health", nullptr, std::chrono::seconds(60));
    if (!h || h->status != 200) continue;
    auto loops = h->body["loops"];
    int complete = loops.value("complete", 0), failed = loops.value("failed", 0);
    int active = h->body.value("active_runs", 0);
    if (ms_since(t0) - last_report > 10000) {
      last_report = ms_since(t0);
      std::fprintf(stderr, "  [%.0f s] %s active_runs=%d\n", last_report / 1000,
                   loops.dump().c_str(), active);
    }
    if (complete + failed >= total_loops && active == 0) done = true;
  }
  // The completions' merges into the integration branch run after their runs end; the last one
  // merges the tree into main (merge: auto). Done when main moves.
  while (done && main_sha(repo) == main_before && ms_since(t0) < timeout_ms)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  double done_ms = ms_since(t0);
  ProcStats ds = proc_stats(d);
  ProcStats ms = proc_stats(mock.pid);

  // `loopr list --json` (the CLI, a fresh process each time) and GET /v1/loops (blocking client).
  std::vector<double> list_cli, list_api;
  std::size_t listed = 0;
  for (int i = 0; i < 5; ++i) {
    auto t = Clock::now();
    auto r = client.call("GET", "/v1/loops");
    list_api.push_back(ms_since(t));
    if (r && r->status == 200) listed = r->body["loops"].size();
    if (!bin.loopr.empty()) {
      t = Clock::now();
      int rc = std::system((bin.loopr + " -C " + repo.string() + " list --json > " +
                            (dir / "list.json").string() + " 2>&1")
                               .c_str());
      list_cli.push_back(ms_since(t));
      if (rc != 0 && i == 0)
        std::fprintf(stderr, "daemon_bench: loopr list --json: %s\n",
                     read_file(dir / "list.json").c_str());
    }
  }
  std::size_t list_bytes = fs::exists(dir / "list.json") ? fs::file_size(dir / "list.json") : 0;
  int errors = count_errors(repo);
  stop(d);
  stop(mock.pid);

  // From the store: iteration times, and the overhead of each iteration beyond the model and
  // validation.
  auto store = must(TaskStore::open(RepoPaths(repo).state_dir().string(), {.sync = false}),
                    "reopen the store");
  auto all = must(store->list_loops(), "list");
  TimestampMs first_start = 0, last_finish = 0, last_merge = 0;
  std::vector<double> overhead, model, validation_ms, duration;
  int iterations_done = 0, complete = 0, failed = 0;
  std::map<std::string, int> other;
  for (const auto& l : all) {
    if (l.type != LoopType::code) continue;
    if (l.status == LoopStatus::complete)
      ++complete;
    else if (l.status == LoopStatus::failed)
      ++failed;
    else
      ++other[to_string(l.status)];
    for (const auto& r : must(store->iterations(l.id), "iterations")) {
      ++iterations_done;
      if (first_start == 0 || r.started_at < first_start) first_start = r.started_at;
      last_finish = std::max(last_finish, r.finished_at);
      double m = static_cast<double>(r.details.model_ms),
             v = static_cast<double>(r.details.validation_ms);
      duration.push_back(static_cast<double>(r.duration_ms));
      model.push_back(m);
      validation_ms.push_back(v);
      overhead.push_back(static_cast<double>(r.duration_ms) - m - v);
    }
  }
  std::uint64_t after = 0;
  bool merged_main = false;
  while (true) {
    auto events = must(store->events_since(after, 10000), "events");
    if (events.empty()) break;
    for (const auto& e : events) {
      after = e.seq;
      if (e.type == "merged") {
        last_merge = std::max(last_merge, e.time);
        if (e.data.value("into", "") == "main") merged_main = true;
      }
    }
  }
  store.reset();

  double ideal_s = iterations * calls * latency_ms / 1000.0;  // every loop has its own slot
  double wall_s = static_cast<double>(last_finish - exec_ms) / 1000.0;
  double merged_s = static_cast<double>(last_merge - exec_ms) / 1000.0;
  std::string tag = std::to_string(n) + " loops";
  row(tag + ": code loops complete / failed / other",
      std::to_string(complete) + " / " + std::to_string(failed) + " / " +
          std::to_string(total_code - complete - failed),
      std::to_string(iterations_done) + " iterations; " + std::to_string(errors) +
          " errors in daemon.log" + (other.empty() ? "" : "; " + nlohmann::json(other).dump()));
  row(tag + ": wall, exec → last iteration recorded", fmt("%.2f s", wall_s),
      "ideal " + fmt("%.2f s", ideal_s) + " (" + std::to_string(iterations) + " it × " +
          std::to_string(calls) + " calls × " + std::to_string(latency_ms) +
          " ms, slots ≥ loops); ×" + fmt("%.1f", wall_s / ideal_s) + " ideal");
  row(tag + ": wall, exec → tree merged into main",
      merged_main ? fmt("%.2f s", merged_s) : std::string("not merged"),
      "health first answered after " + fmt("%.0f ms", health_ms) + "; poll saw all done at " +
          fmt("%.1f s", done_ms / 1000));
  row(tag + ": iterations/s", fmt("%.1f", iterations_done / wall_s),
      "first iteration started " +
          fmt("%.2f s", static_cast<double>(first_start - exec_ms) / 1000) + " after exec");
  row(tag + ": daemon peak RSS (VmHWM)", fmt("%.1f MiB", ds.hwm_kb / 1024.0),
      "idle daemon " + fmt("%.1f MiB", idle_kb / 1024.0) + "; " +
          fmt("%.1f KiB", static_cast<double>(ds.hwm_kb - idle_kb) / n) + " per loop above idle");
  row(tag + ": daemon CPU", fmt("%.1f s", ds.cpu_s),
      fmt("%.1f ms", 1000 * (ds.cpu_s - at_start.cpu_s) / std::max(1, iterations_done)) +
          " per iteration after start-up (" + fmt("%.2f s", at_start.cpu_s) +
          " until health answered); its children (validation sh) " +
          fmt("%.1f ms", 1000 * ds.children_cpu_s / std::max(1, iterations_done)) +
          " per iteration");
  row(tag + ": mock-llm CPU", fmt("%.1f s", ms.cpu_s - mock_before.cpu_s),
      fmt("%.2f ms", 1000 * (ms.cpu_s - mock_before.cpu_s) / std::max(1, iterations_done * calls)) +
          " per model call");
  row(tag + ": iteration wall p50 / p99",
      fmt("%.0f", pct(duration, 0.5)) + " / " + fmt("%.0f ms", pct(duration, 0.99)),
      "model p50 " + fmt("%.0f", pct(model, 0.5)) + " / p99 " + fmt("%.0f ms", pct(model, 0.99)) +
          "; validation p50 " + fmt("%.0f", pct(validation_ms, 0.5)) + " / p99 " +
          fmt("%.0f ms", pct(validation_ms, 0.99)));
  row(tag + ": orchestration per iteration p50 / p99",
      fmt("%.0f", pct(overhead, 0.5)) + " / " + fmt("%.0f ms", pct(overhead, 0.99)),
      "duration − model_ms − validation_ms, from the iteration records, under this load");
  if (!list_cli.empty())
    row(tag + ": `loopr list --json`", fmt("%.0f ms", pct(list_cli, 0.5)),
        "median of 5 (fresh process each); " + std::to_string(listed) + " loops, " +
            std::to_string(list_bytes / 1024) + " KiB");
  row(tag + ": GET /v1/loops (daemon::Client)", fmt("%.0f ms", pct(list_api, 0.5)),
      "median of 5, " + std::to_string(listed) + " loops");
  remove_unless_kept(dir);
  return 0;
}

// ------------------------------------------------------------------ recovery

int recovery(const Binaries& bin, int n, int pending) {
  std::string tmpl = (fs::temp_directory_path() / "loopr-recovery-bench-XXXXXX").string();
  fs::path dir = mkdtemp(tmpl.data());
  fs::path repo = dir / "repo";
  make_repo(repo, 20);
  Mock mock = start_mock(bin, dir, mock_script(2), 200);
  write_config(repo, mock.port, 100, 3);
  const std::string validation = validation_for(3);

  // 100-loop trees: 1 plan + 9 specs × 5 phases + 45 code loops = 100.
  int trees = std::max(1, n / 100);
  const int in_progress = pending > 0 ? std::min(5, trees) : 0;
  const int pending_per_tree = in_progress ? (pending + in_progress - 1) / in_progress : 0;
  auto t_seed = Clock::now();
  {
    auto store = must(TaskStore::open(RepoPaths(repo).state_dir().string(), {.sync = false}),
                      "open the store");
    for (int t = 1; t <= trees; ++t) {
      WriteSet set;
      bool busy = t > trees - in_progress;
      seed_tree(
          set, t, 9, 5, !busy, [&](int k) { return !busy || k < 45 - pending_per_tree; }, 5,
          validation);
      must(store->apply(std::move(set)), "seed");
      must(store->next_plan_number(), "plan counter");
    }
  }
  for (int t = trees - in_progress + 1; t <= trees; ++t)
    run("git -C " + repo.string() + " branch " + git::integration_branch(plan_id(t)) + " main");
  double seed_ms = ms_since(t_seed);

  const Started started = start_and_wait(bin, repo, dir, 600000);
  if (started.health.is_null()) return 1;
  const TimestampMs exec_ms = started.exec_ms;
  const pid_t d = started.pid;
  const nlohmann::json& health = started.health;
  const double health_ms = started.health_ms;
  ProcStats ds = proc_stats(d);
  // A second health call: what `loopr daemon status` costs with this many loops.
  daemon::Client client(RepoPaths(repo).socket());
  std::vector<double> again;
  for (int i = 0; i < 3; ++i) {
    auto t = Clock::now();
    (void)client.call("GET", "/v1/health");
    again.push_back(ms_since(t));
  }
  // GET /v1/loops with this many loops (what `loopr list` asks).
  auto t_list = Clock::now();
  auto listed = client.call("GET", "/v1/loops", nullptr, std::chrono::seconds(60));
  double list_ms = ms_since(t_list);
  std::size_t list_n = listed && listed->status == 200 ? listed->body["loops"].size() : 0;
  // What a client that shows only some loops asks (issue 18): running ones, one plan's tree.
  auto median_ms = [&](const std::string& target, std::size_t& n) {
    std::vector<double> took;
    for (int i = 0; i < 5; ++i) {
      auto t = Clock::now();
      auto r = client.call("GET", target, nullptr, std::chrono::seconds(60));
      took.push_back(ms_since(t));
      n = r && r->status == 200 ? r->body["loops"].size() : 0;
    }
    return pct(took, 0.5);
  };
  std::size_t running_n = 0, plan_n = 0;
  double running_ms = median_ms("/v1/loops?status=running", running_n);
  double plan_ms = median_ms("/v1/loops?plan=001", plan_n);
  stop(d);
  stop(mock.pid);
  // Read after the stop: the daemon flushes its log once a second.
  std::string recovery_line = daemon_log_line(repo, "recovery:");
  std::string serving_line = daemon_log_line(repo, "serving ");
  int total = health["loops"].value("total", 0);
  std::string tag = std::to_string(total) + " loops";
  row(tag + " (" + std::to_string(in_progress * pending_per_tree) +
          " pending): exec → GET /v1/health answers",
      fmt("%.0f ms", health_ms),
      "daemon CPU by then " + fmt("%.2f s", ds.cpu_s) + ", RSS " +
          fmt("%.0f MiB", ds.rss_kb / 1024.0) + "; store seeded in " +
          fmt("%.1f s", seed_ms / 1000));
  TimestampMs recovered = log_time(recovery_line), serving = log_time(serving_line);
  if (recovered && serving)
    row(tag + ": where that time went",
        fmt("%.0f ms", static_cast<double>(recovered - exec_ms)) + " + " +
            fmt("%.0f ms", static_cast<double>(serving - recovered)) + " + " +
            fmt("%.0f ms", health_ms - static_cast<double>(serving - exec_ms)),
        "exec → store read and sorted (daemon.log `recovery:`) → finishing work done, listening "
        "(`serving`) → "
        "first health answer");
  row(tag + ": GET /v1/health afterwards", fmt("%.0f ms", pct(again, 0.5)),
      "median of 3 (it counts loops by status)");
  row(tag + ": GET /v1/loops", fmt("%.0f ms", list_ms),
      std::to_string(list_n) + " loops listed (the store's in-memory summaries)");
  row(tag + ": GET /v1/loops?status=running / ?plan=001",
      fmt("%.1f", running_ms) + " / " + fmt("%.1f ms", plan_ms),
      "median of 5; " + std::to_string(running_n) + " / " + std::to_string(plan_n) +
          " loops listed (only those are copied and encoded)");
  if (!recovery_line.empty()) {
    auto at = recovery_line.find("recovery:");
    std::fprintf(stderr, "  daemon.log: %s\n", recovery_line.substr(at).c_str());
  }
  remove_unless_kept(dir);
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: daemon_bench scale N [--iterations 3] [--latency-ms 200] [--calls 2] "
               "[--files 20] [--loopr BIN] [--mock BIN]\n"
               "       daemon_bench recovery N [--pending P] [--loopr BIN] [--mock BIN]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  std::string mode = argv[1];
  if (mode == "serve") {
    daemon::DaemonOptions options;
    options.repo = argv[2];
    auto r = daemon::run_daemon(options);
    if (!r) std::fprintf(stderr, "daemon: %s\n", r.error().message.c_str());
    return r ? 0 : 1;
  }
  int n = std::atoi(argv[2]);
  std::map<std::string, std::string> opt;
  for (int i = 3; i + 1 < argc; i += 2) opt[argv[i]] = argv[i + 1];
  auto get = [&](const char* k, const std::string& fallback) {
    return opt.count(k) ? opt[k] : fallback;
  };

  fs::path self = fs::canonical("/proc/self/exe");
  fs::path build =
      self.parent_path().parent_path().parent_path();  // <build>/tools/bench/daemon_bench
  Binaries bin;
  bin.self = self.string();
  bin.mock = get("--mock", (build / "tools/mock-llm/loopr-mock-llm").string());
  bin.loopr = get("--loopr", (build / "loopr").string());
  if (bin.loopr == "self" || !fs::exists(bin.loopr)) bin.loopr.clear();
  if (!fs::exists(bin.mock)) {
    std::fprintf(stderr, "daemon_bench: no mock-llm at %s (--mock BIN)\n", bin.mock.c_str());
    return 1;
  }
  std::signal(SIGPIPE, SIG_IGN);
  g_sandbox = get("--sandbox", g_sandbox);
  if (mode == "scale")
    return scale(bin, n, std::stoi(get("--iterations", "3")), std::stoi(get("--latency-ms", "200")),
                 std::stoi(get("--calls", "2")), std::stoi(get("--files", "20")));
  if (mode == "recovery") return recovery(bin, n, std::stoi(get("--pending", "100")));
  return usage();
}
