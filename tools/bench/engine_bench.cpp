// Orchestration overhead per iteration: everything an iteration costs except waiting for the
// model and running the validation command (reading state, rendering the prompt, tools,
// checkpoint commit, the atomic store write, events, transcripts), on a repository of 1,000
// files, against loopr-mock-llm with no model latency. Prints p50/p99; asserts nothing.
//   build/tools/bench/engine_bench [ITERATIONS] [MOCK_BINARY]
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/use_future.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <future>
#include <thread>

#include <loopr/engine/engine.hpp>
#include <loopr/engine/repo_prompts.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>
#include <loopr/store/store_writes.hpp>

using namespace loopr;
namespace fs = std::filesystem;

static int sh(const std::string& cmd) { return std::system(cmd.c_str()); }

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 40;
  std::string mock =
      argc > 2
          ? argv[2]
          : (fs::path(argv[0]).parent_path().parent_path() / "mock-llm/loopr-mock-llm").string();
  std::string tmpl = (fs::temp_directory_path() / "loopr-engine-bench-XXXXXX").string();
  fs::path dir = mkdtemp(tmpl.data());
  fs::path repo = dir / "repo";
  fs::create_directories(repo / "src");
  for (int i = 0; i < 1000; ++i) {
    std::ofstream f(repo / "src" / ("file" + std::to_string(i) + ".c"));
    f << "int f" << i << "(void) { return " << i << "; }\n";
  }
  sh("cd " + repo.string() +
     " && git init -q -b main . && git config user.name b && git config user.email b@b && git add "
     "-A && git commit -qm init");

  std::ofstream(dir / "script.yml") << R"(
rules:
  - name: edit
    match: {loop_type: code, turn: 1}
    reply:
      tool_use: [{name: write_file, input: {path: "src/new-{{n}}.c", content: "int g{{n}};\n"}}]
  - name: end
    match: {loop_type: code}
    reply: {text: "done"}
)";
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    execl(mock.c_str(), mock.c_str(), "--script", (dir / "script.yml").c_str(), "--port-file",
          (dir / "port").c_str(), nullptr);
    _exit(127);
  }
  for (int i = 0; i < 400 && !fs::exists(dir / "port"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  int port = 0;
  std::ifstream(dir / "port") >> port;
  if (port == 0) {
    std::fprintf(stderr, "engine_bench: could not start %s\n", mock.c_str());
    return 1;
  }

  auto config = std::make_shared<Config>();
  config->llm.base_url = "http://127.0.0.1:" + std::to_string(port);
  config->loops[LoopType::code].validation = "false";
  config->limits.no_progress_iterations = 1000;
  config->concurrency.requests_per_minute = 1000000;  // measure the engine, not the rate limit
  auto store = std::move(TaskStore::open((repo / ".loopr/state").string()).value());
  net::io_context io;
  net::thread_pool pool(4);
  auto env = [](const char* n) -> std::optional<std::string> {
    return std::string(n) == "ANTHROPIC_API_KEY" ? std::optional<std::string>("bench")
                                                 : std::nullopt;
  };
  auto client = std::move(llm::make_client(*config, env, io, pool).value());
  engine::Scheduler scheduler(io.get_executor(), engine::SchedulerOptions::from_config(*config));
  tools::RunnerSlots runners(config->concurrency);
  engine::EventBus bus;
  engine::LoopJournal journal(*store, pool, bus);
  engine::CostLedger costs;
  engine::RepoPrompts prompts(repo);
  auto executor = exec::make_executor(config->sandbox, exec::ExecutorOptions{RepoPaths(repo)});
  engine::EngineContext ctx{io,
                            pool,
                            journal,
                            config,
                            RepoPaths(repo),
                            *client,
                            scheduler,
                            runners,
                            *executor,
                            prompts,
                            costs,
                            {},
                            std::chrono::milliseconds(10)};

  auto r = git::Repository::open(repo).value();
  r.create_branch(git::integration_branch("001"), "main").value();
  r.create_branch(git::loop_branch("001", "code-001-001-001"), git::integration_branch("001"))
      .value();
  auto wt = r.add_worktree("code-001-001-001", git::loop_branch("001", "code-001-001-001")).value();
  Loop loop;
  loop.id = "code-001-001-001";
  loop.type = LoopType::code;
  loop.plan_id = "001";
  loop.max_iterations = iterations;
  loop.worktree = wt.path().string();
  create_loop(*store, loop).value();

  engine::LoopRunner runner(ctx);
  auto fut = net::co_spawn(io, runner.run(loop.id, std::make_shared<engine::LoopControl>()),
                           net::use_future);
  while (fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    io.run_one_for(std::chrono::milliseconds(50));
  fut.get();

  std::vector<double> overhead, model, validation, total, state, checkpoint, rest;
  std::vector<IterationRecord> records = store->iterations(loop.id).value();
  for (const auto& rec : records) {
    double m = static_cast<double>(rec.details.model_ms),
           v = static_cast<double>(rec.details.validation_ms);
    total.push_back(static_cast<double>(rec.duration_ms));
    model.push_back(m);
    validation.push_back(v);
    overhead.push_back(static_cast<double>(rec.duration_ms) - m - v);
    double st = static_cast<double>(rec.details.state_ms),
           cp = static_cast<double>(rec.details.checkpoint_ms);
    state.push_back(st);
    checkpoint.push_back(cp);
    rest.push_back(overhead.back() - st - cp);
  }
  auto pct = [](std::vector<double> xs, double p) {
    std::sort(xs.begin(), xs.end());
    return xs.empty() ? 0.0
                      : xs[std::min(xs.size() - 1,
                                    static_cast<std::size_t>(p * static_cast<double>(xs.size())))];
  };
  std::printf(
      "engine_bench: %zu iterations of a code loop, 1,000-file repo, 2 model calls + 1 write_file "
      "each\n",
      total.size());
  std::printf("  iteration wall      p50 %6.1f ms   p99 %6.1f ms\n", pct(total, 0.5),
              pct(total, 0.99));
  std::printf(
      "  model calls         p50 %6.1f ms   p99 %6.1f ms  (mock, zero latency, HTTP on loopback)\n",
      pct(model, 0.5), pct(model, 0.99));
  std::printf("  validation command  p50 %6.1f ms   p99 %6.1f ms  (`false`)\n",
              pct(validation, 0.5), pct(validation, 0.99));
  // The records hold whole milliseconds: the mean tells changes below one apart.
  auto mean = [](const std::vector<double>& xs) {
    double sum = 0;
    for (double x : xs) sum += x;
    return xs.empty() ? 0.0 : sum / static_cast<double>(xs.size());
  };
  std::printf("  orchestration       p50 %6.1f ms   p99 %6.1f ms  (all the rest; mean %.2f ms)\n",
              pct(overhead, 0.5), pct(overhead, 0.99), mean(overhead));
  std::printf("    reading state     p50 %6.1f ms   p99 %6.1f ms  (status, cumulative diff, log)\n",
              pct(state, 0.5), pct(state, 0.99));
  std::printf("    checkpoint        p50 %6.1f ms   p99 %6.1f ms  (stage all, tree, commit)\n",
              pct(checkpoint, 0.5), pct(checkpoint, 0.99));
  std::printf(
      "    the rest          p50 %6.1f ms   p99 %6.1f ms  (prompt, tools, transcripts, store "
      "write, events, protected paths; mean %.2f ms)\n",
      pct(rest, 0.5), pct(rest, 0.99), mean(rest));
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  pool.join();
  fs::remove_all(dir);
  return 0;
}
