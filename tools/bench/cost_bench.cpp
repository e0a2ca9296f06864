// What prompt caching saves (docs/guide.md "What a tree costs"), against loopr-mock-llm emulating
// Anthropic's prompt cache by its documented rules (defaults.prompt_cache):
//   1. one scripted code iteration of 20 model turns (19 read_file calls on a real-sized file,
//      then the answer), with llm.cache auto and off;
//   2. the demo tree (`loopr demo --yes`, its scripted model at zero latency), cache on and off.
// Prints input tokens, cache writes, cache reads and the input cost at claude-sonnet-5-5's
// prices; asserts nothing. The goals: input cost with caching <= 30 % of without on (1), a
// cache-hit share >= 70 % of all input across the demo tree on (2).
//   build/tools/bench/cost_bench [MOCK_BINARY] [LOOPR_BINARY] [EXAMPLE_DIR]
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/use_future.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include <loopr/engine/engine.hpp>
#include <loopr/engine/repo_prompts.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>
#include <loopr/llm/pricing.hpp>
#include <loopr/store/store_writes.hpp>

using namespace loopr;
namespace fs = std::filesystem;

namespace {

int sh(const std::string& cmd) { return std::system(cmd.c_str()); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Mock {
  pid_t pid = -1;
  int port = 0;
  Mock(const std::string& bin, const fs::path& script, const fs::path& dir) {
    pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      execl(bin.c_str(), bin.c_str(), "--script", script.c_str(), "--port-file",
            (dir / "port").c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 400 && !fs::exists(dir / "port"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    std::ifstream(dir / "port") >> port;
  }
  ~Mock() {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
  }
};

// Input cost at `p` (uncached input, cache writes, cache reads), and what all of it would cost
// as plain input.
double input_cost(const Price& p, const Usage& u) {
  return 1e-6 * (static_cast<double>(u.input_tokens) * p.input +
                 static_cast<double>(u.cache_write_tokens) * p.cache_write +
                 static_cast<double>(u.cache_read_tokens) * p.cache_read);
}
std::int64_t all_input(const Usage& u) {
  return u.input_tokens + u.cache_write_tokens + u.cache_read_tokens;
}

void print_row(const char* label, const Usage& u, const Price& p) {
  std::printf(
      "  %-9s input %8lld  cache writes %8lld  cache reads %8lld  input cost $%.4f  (total "
      "$%.4f)\n",
      label, static_cast<long long>(u.input_tokens), static_cast<long long>(u.cache_write_tokens),
      static_cast<long long>(u.cache_read_tokens), input_cost(p, u), u.cost_usd);
}

// One code iteration of 20 turns through the real engine; the iteration's usage.
Usage twenty_turns(const std::string& mock_bin, bool cache) {
  std::string tmpl = (fs::temp_directory_path() / "loopr-cost-bench-XXXXXX").string();
  fs::path dir = mkdtemp(tmpl.data());
  fs::path repo = dir / "repo";
  fs::create_directories(repo / "src");
  // A source file of ~6 KB: what a model reads while it works.
  {
    std::ofstream f(repo / "src" / "parser.c");
    for (int i = 0; i < 150; ++i)
      f << "int parse_field_" << i << "(const char *s) { return s[" << i % 7 << "]; }\n";
  }
  sh("cd " + repo.string() +
     " && git init -q -b main . && git config user.name b && git config user.email b@b && git add "
     "-A && git commit -qm init");
  std::ofstream(dir / "script.yml") << R"(
defaults: {prompt_cache: true, usage: {output_tokens: 150}}
rules:
  - name: read
    match: {loop_type: code}
    times: 19
    reply:
      text: "Reading the parser again to check the next field."
      tool_use: [{name: read_file, input: {path: "src/parser.c"}}]
  - name: done
    match: {loop_type: code}
    reply: {text: "done"}
)";
  Mock mock(mock_bin, dir / "script.yml", dir);
  auto config = std::make_shared<Config>();
  config->llm.base_url = "http://127.0.0.1:" + std::to_string(mock.port);
  config->llm.cache = cache;
  config->loops[LoopType::code].validation = "true";
  config->loops[LoopType::code].max_turns_per_iteration = 50;
  config->concurrency.requests_per_minute = 1000000;
  config->sandbox.mode = "none";  // `true` is the whole check; the bench measures tokens
  auto store = std::move(TaskStore::open((repo / ".loopr/state").string()).value());
  net::io_context io;
  net::thread_pool pool(2);
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
  loop.task = "Make the parser accept quoted fields";
  loop.max_iterations = 1;
  loop.worktree = wt.path().string();
  loop.validation_command = "true";
  create_loop(*store, loop).value();
  engine::LoopRunner runner(ctx);
  auto fut = net::co_spawn(io, runner.run(loop.id, std::make_shared<engine::LoopControl>()),
                           net::use_future);
  while (fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    io.run_one_for(std::chrono::milliseconds(50));
  fut.get();
  Usage u;
  std::vector<IterationRecord> records = store->iterations(loop.id).value();
  for (const auto& rec : records) {
    u += rec.usage;
    std::printf("  (%s: %d turns)\n", cache ? "cache on" : "cache off", rec.details.turns);
  }
  store.reset();
  pool.join();
  fs::remove_all(dir);
  return u;
}

// The demo tree with the example's model emulating the cache; its `loopr stats --json` total.
nlohmann::json demo_tree(const std::string& loopr_bin, const fs::path& example, bool cache) {
  std::string tmpl = (fs::temp_directory_path() / "loopr-cost-demo-XXXXXX").string();
  fs::path dir = mkdtemp(tmpl.data());
  fs::path copy = dir / "example";
  fs::copy(example, copy, fs::copy_options::recursive);
  std::string model = slurp(copy / "mock-model.yml");
  model = std::regex_replace(model, std::regex(R"(\n  latency: [^\n]*)"),
                             "\n  latency: 0ms\n  prompt_cache: true");
  std::ofstream(copy / "mock-model.yml") << model;
  std::string config = slurp(copy / "config.yml");
  if (!cache)
    config = std::regex_replace(config, std::regex(R"(\n  judge: false)"),
                                "\n  judge: false\n  cache: off");
  std::ofstream(copy / "config.yml") << config;
  std::string out = (dir / "demo.out").string();
  int rc = sh("LOOPR_EXAMPLE_DIR=" + copy.string() + " TMPDIR=" + dir.string() + " " + loopr_bin +
              " demo --yes > " + out + " 2>&1");
  std::smatch m;
  std::string text = slurp(out);
  nlohmann::json total;
  if (rc == 0 && std::regex_search(text, m, std::regex(R"(repo: (\S+))"))) {
    std::string stats = (dir / "stats.json").string();
    sh(loopr_bin + " -C " + m[1].str() + " stats --json > " + stats + " 2>/dev/null");
    auto j = nlohmann::json::parse(slurp(stats), nullptr, false);
    if (j.is_object()) total = j["total"];
  } else {
    std::fprintf(stderr, "cost_bench: the demo failed (exit %d):\n%s\n", rc, text.c_str());
  }
  fs::remove_all(dir);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path bin_dir = fs::path(argv[0]).parent_path().parent_path();
  std::string mock = argc > 1 ? argv[1] : (bin_dir / "mock-llm/loopr-mock-llm").string();
  std::string loopr = argc > 2 ? argv[2] : (bin_dir.parent_path() / "loopr").string();
  fs::path example = argc > 3 ? fs::path(argv[3]) : fs::path(LOOPR_SOURCE_DIR) / ".loopr-example";
  const Price sonnet = Config::default_pricing().at("claude-sonnet-5-5");

  std::printf(
      "cost_bench 1: one code iteration, 20 model turns (19 read_file of a 6 KB file), "
      "claude-sonnet-5-5 prices\n");
  Usage on = twenty_turns(mock, true);
  Usage off = twenty_turns(mock, false);
  print_row("cache on", on, sonnet);
  print_row("cache off", off, sonnet);
  double share = input_cost(sonnet, off) > 0 ? input_cost(sonnet, on) / input_cost(sonnet, off) : 0;
  std::printf(
      "  input cost with caching: %.1f %% of without (goal <= 30 %%); %lld vs %lld input tokens\n",
      100 * share, static_cast<long long>(all_input(on)), static_cast<long long>(all_input(off)));

  std::printf("cost_bench 2: the demo tree (`loopr demo --yes`, zero model latency)\n");
  for (bool cache : {true, false}) {
    nlohmann::json t = demo_tree(loopr, example, cache);
    if (!t.is_object()) continue;
    Usage u;
    u.input_tokens = t.value("input_tokens", std::int64_t{0});
    u.cache_write_tokens = t.value("cache_write_tokens", std::int64_t{0});
    u.cache_read_tokens = t.value("cache_read_tokens", std::int64_t{0});
    u.cost_usd = t.value("cost_usd", 0.0);
    print_row(cache ? "cache on" : "cache off", u, sonnet);
    if (cache)
      std::printf("  hit share %.1f %% of all input (goal >= 70 %%); without the cache $%.4f\n",
                  100 * t.value("cache_hit_share", 0.0), t.value("uncached_cost_usd", 0.0));
  }
  return 0;
}
