// The engine (and the manager over it) for a test: one kit, the model as an option.
//
// - In process (the default, for fast tests): the model is mock-llm's script engine answering
//   the real client in process (ScriptedModel), commands go to a FakeExecutor, the repository
//   lives in memory (/dev/shm) and the store in this process (TaskStore::in_memory: no
//   RocksDB), git is the real libgit2. No socket, no child process: a loop's whole run takes
//   milliseconds.
// - Over loopback (`EngineKit(kOverLoopback, …)`, for what needs a real process: a model call
//   cut by a stop, a killed tool, the sandbox): the real mock-llm server, the real client over
//   HTTP, the configured sandbox (bubblewrap by default), the repository and the RocksDB store
//   on disk.
#pragma once

#include <boost/asio/use_future.hpp>
#include <future>
#include <map>
#include <memory>

#include <loopr/core/ids.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/engine/engine.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>
#include <loopr/manager/loop_manager.hpp>

#include "support/fakes/fake_executor.hpp"
#include "support/fakes/loop_setup.hpp"
#include "support/fakes/scripted_model.hpp"
#include "support/fakes/test_prompts.hpp"
#include "support/git_repo.hpp"
#include "support/mock_llm.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

/// The text of the first user message of a logged model request (a string, or its text blocks).
inline std::string first_user_text(const nlohmann::json& request) {
  const auto& m = request["body"]["messages"][0];
  if (m["content"].is_string()) return m["content"];
  std::string out;
  for (const auto& b : m["content"])
    if (b.value("type", "") == "text") out += b.value("text", "");
  return out;
}

/// A plan loop's model: its first turn writes a good plan where the prompt asks for the specs to
/// create, a plan without its sections otherwise (the format check sends it back); its second
/// turn says "Written."
inline constexpr const char* kPlanScript = R"(
rules:
  - name: good-plan
    match: {loop_type: plan, first_user: "`(\\.loopr/plans/[^`]+)`[\\s\\S]*Specs to Create", turn: 1}
    reply:
      tool_use:
        - name: write_file
          input:
            path: "{{first_user.1}}"
            content: "# Plan: greet --shout\n\n## Overview\nAdd a flag.\n\n## Phases\n1. CLI\n\n## Success Criteria\n- tests pass\n\n## Specs to Create\n- spec-cli-flag: parse --shout\n"
  - name: bad-plan
    match: {loop_type: plan, first_user: "`(\\.loopr/plans/[^`]+)`", turn: 1}
    reply:
      tool_use:
        - name: write_file
          input: {path: "{{first_user.1}}", content: "# Plan\n\nJust do it.\n"}
  - name: done
    match: {loop_type: plan, turn: 2}
    reply: {text: "Written."}
)";

/// Picks the kit's over-loopback form: `EngineKit h(kOverLoopback, script, files)`.
struct OverLoopback {};
inline constexpr OverLoopback kOverLoopback{};

struct EngineKit {
  const bool loopback = false;  ///< the mock-llm process and the configured sandbox
  TempDir dir;
  TempDir logs;
  std::unique_ptr<ScriptedModel> model;  ///< in process
  std::unique_ptr<MockLlm> mock;         ///< over loopback
  std::unique_ptr<TaskStore> store;
  net::io_context io;
  net::thread_pool pool;
  engine::EventBus bus;
  std::unique_ptr<engine::LoopJournal> journal;
  engine::CostLedger costs;
  std::shared_ptr<Config> config = std::make_shared<Config>();
  std::unique_ptr<llm::LlmClient> client;
  std::unique_ptr<engine::Scheduler> scheduler;
  std::unique_ptr<tools::RunnerSlots> runners;
  FakeExecutor executor;                    ///< in process: what the commands answer
  std::unique_ptr<exec::Executor> sandbox;  ///< over loopback: the configured one
  TestPrompts prompts;
  const engine::PromptSource* prompt_source = &prompts;  ///< e.g. the shipped templates instead
  std::optional<engine::SchedulerOptions> scheduler_options;  ///< default: from config
  std::unique_ptr<engine::EngineContext> ctx;
  std::unique_ptr<manager::LoopManager> manager_;
  std::vector<Event> published;

  /// In process. `files` make the repository's first commit on `main`.
  EngineKit(const std::string& script, const std::map<std::string, std::string>& files)
      : EngineKit(files, false) {
    auto repo = git::Repository::create(dir.path(), "main", {"test", "t@t"}, "init");
    if (!repo) throw std::runtime_error(repo.error().message);
    model = std::make_unique<ScriptedModel>(script, (logs / "requests.jsonl").string());
    open_store();
    config->llm.stream = false;
    config->llm.max_retries = 2;
  }

  /// Over loopback: `mock_args` go to the mock-llm server (e.g. `--latency 40ms`).
  EngineKit(OverLoopback, const std::string& script,
            const std::map<std::string, std::string>& files,
            std::vector<std::string> mock_args = {})
      : EngineKit(files, true) {
    auto init = git_init_commit_all(dir.path());
    if (init.exit_code != 0) throw std::runtime_error(init.output);
    mock = std::make_unique<MockLlm>(script, std::move(mock_args));
    open_store();
    config->llm.base_url = mock->url();
    config->llm.max_retries = 3;
  }

  /// Builds the client and the rest once the test has set `config` the way it wants.
  engine::EngineContext& engine() {
    if (ctx) return *ctx;
    client = loopback ? loopback_client() : model->client(*config);
    scheduler = std::make_unique<engine::Scheduler>(
        io.get_executor(),
        scheduler_options.value_or(engine::SchedulerOptions::from_config(*config)));
    runners = std::make_unique<tools::RunnerSlots>(config->concurrency);
    if (loopback)
      sandbox = exec::make_executor(config->sandbox, exec::ExecutorOptions{RepoPaths(dir.path())});
    llm::RetryPolicy retry;
    retry.max_retries = config->llm.max_retries;
    retry.initial_backoff = std::chrono::milliseconds(loopback ? 20 : 1);
    retry.max_backoff = std::chrono::milliseconds(loopback ? 200 : 2);
    exec::Executor& commands = loopback ? *sandbox : executor;
    ctx = std::make_unique<engine::EngineContext>(engine::EngineContext{
        io, pool, *journal, config, RepoPaths(dir.path()), *client, *scheduler, *runners, commands,
        *prompt_source, costs, retry, std::chrono::milliseconds(loopback ? 10 : 1)});
    return *ctx;
  }

  /// The manager over this engine, started (crash recovery done).
  manager::LoopManager& manager() {
    if (manager_) return *manager_;
    manager_ = std::make_unique<manager::LoopManager>(engine());
    auto started = wait(manager_->start());
    if (!started) throw std::runtime_error(started.error().message);
    return *manager_;
  }

  /// Runs a coroutine on the io thread until it returns.
  template <typename T>
  T wait(net::awaitable<T> work) {
    std::optional<T> out;  // (use_future wants a default-constructible T; Result is not)
    auto run = [](net::awaitable<T> w, std::optional<T>& o) -> net::awaitable<void> {
      o.emplace(co_await std::move(w));
    };
    auto fut = net::co_spawn(io, run(std::move(work), out), net::use_future);
    drive_until(fut);
    fut.get();
    return std::move(*out);
  }
  void wait(net::awaitable<void> work) {
    auto fut = net::co_spawn(io, std::move(work), net::use_future);
    drive_until(fut);
    fut.get();
  }

  /// Runs the io_context until `cond` holds (the manager's runs go on in the background).
  bool drive_while_not(const std::function<bool()>& cond,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    io.restart();
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!cond()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io.run_one_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  /// Creates loop `id` of `type` with its branch and worktree, stored pending.
  Loop add_loop(const std::string& id, LoopType type, const std::string& task,
                int max_iterations = 5) {
    return add_loop_with_worktree(*store, dir.path(), id, type, task, max_iterations);
  }

  /// Runs one loop to the end of its run and returns its final record.
  Loop run(const std::string& id,
           std::shared_ptr<engine::LoopControl> control = std::make_shared<engine::LoopControl>(),
           engine::IterationGate* gate = nullptr) {
    engine::LoopRunner runner(engine());
    return wait(runner.run(id, std::move(control), gate)).loop;
  }

  /// Runs the io_context until `fut` is ready (work abandoned by a stop may still be pending).
  template <typename T>
  void drive_until(std::future<T>& fut) {
    io.restart();
    while (fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      io.run_one_for(std::chrono::milliseconds(5));
  }

  Loop loop(const std::string& id) { return store->get_loop(id).value(); }
  std::vector<IterationRecord> iterations(const std::string& id) {
    return store->iterations(id).value();
  }
  /// The model requests of one loop (the x-loopr-loop-id header), in order.
  std::vector<nlohmann::json> requests_of(const std::string& id) const {
    if (model) return model->requests_of(id);
    std::vector<nlohmann::json> out;
    for (auto& r : mock->requests())
      if (r["headers"].value("x-loopr-loop-id", "") == id) out.push_back(r);
    return out;
  }

  /// Background work (a model call abandoned by a stop) refers to the scheduler and client:
  /// end the server so it fails fast, and let it finish before members are destroyed.
  ~EngineKit() {
    if (manager_) wait(manager_->shutdown(std::chrono::seconds(5)));
    manager_.reset();
    mock.reset();
    io.restart();
    if (loopback)
      io.run_for(std::chrono::seconds(10));
    else
      io.run_for(std::chrono::milliseconds(200));
    pool.join();
  }

 private:
  EngineKit(const std::map<std::string, std::string>& files, bool over_loopback)
      : loopback(over_loopback),
        dir("loopr-kit", over_loopback ? disk_temp_base() : memory_temp_base()),
        logs("loopr-kit-log", memory_temp_base()),
        pool(over_loopback ? 4 : 2) {
    for (const auto& [path, content] : files) write_file(dir / path, content);
    config->limits.max_runtime = std::chrono::hours(1);
    config->limits.min_free_space = 0;  // its store may be on a small /dev/shm (Docker: 64 MiB)
    bus.subscribe([this](const Event& e) { published.push_back(e); });
  }

  // After the repository's first commit (which must not hold the store).
  void open_store() {
    if (loopback) {
      auto s = TaskStore::open((dir / ".loopr/state").string(), {.sync = false});
      if (!s) throw std::runtime_error(s.error().message);
      store = std::move(s).value();
    } else {
      store = TaskStore::in_memory();
    }
    journal = std::make_unique<engine::LoopJournal>(*store, pool, bus);
  }

  std::unique_ptr<llm::LlmClient> loopback_client() {
    auto env = [](const char* name) -> std::optional<std::string> {
      if (std::string(name) == "ANTHROPIC_API_KEY" || std::string(name) == "OPENAI_API_KEY")
        return "test-key";
      return std::nullopt;
    };
    auto c = llm::make_client(*config, env, io, pool);
    if (!c) throw std::runtime_error(c.error().message);
    return std::move(c).value();
  }
};

}  // namespace loopr::testing
