// The engine (and the manager over it) in one process, for fast tests: the model is mock-llm's
// script engine answering the real client in process (ScriptedModel), commands go to a
// FakeExecutor, the repository and the RocksDB store live in memory (/dev/shm), git is the real
// libgit2. No socket, no child process: a loop's whole run takes milliseconds. What needs a real
// process (a model call cut by a stop, a killed tool, the sandbox) stays in the integration
// tests (tests/engine/harness.hpp).
#pragma once

#include <boost/asio/use_future.hpp>
#include <future>
#include <map>
#include <memory>

#include <loopr/core/ids.hpp>
#include <loopr/engine/engine.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>
#include <loopr/manager/loop_manager.hpp>
#include <loopr/core/repo_paths.hpp>

#include "support/fakes/fake_executor.hpp"
#include "support/fakes/scripted_model.hpp"
#include "support/fakes/loop_setup.hpp"
#include "support/fakes/test_prompts.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

struct EngineKit {
  TempDir dir{"loopr-kit", memory_temp_base()};
  TempDir logs{"loopr-kit-log", memory_temp_base()};
  std::unique_ptr<ScriptedModel> model;
  std::unique_ptr<TaskStore> store;
  net::io_context io;
  net::thread_pool pool{2};
  engine::EventBus bus;
  std::unique_ptr<engine::LoopJournal> journal;
  engine::CostLedger costs;
  std::shared_ptr<Config> config = std::make_shared<Config>();
  std::unique_ptr<llm::LlmClient> client;
  std::unique_ptr<engine::Scheduler> scheduler;
  std::unique_ptr<tools::RunnerSlots> runners;
  FakeExecutor executor;
  TestPrompts prompts;
  const engine::PromptSource* prompt_source = &prompts;  ///< e.g. the shipped templates instead
  std::unique_ptr<engine::EngineContext> ctx;
  std::unique_ptr<manager::LoopManager> manager_;
  std::vector<Event> published;

  /// `files` make the repository's first commit on `main`.
  EngineKit(const std::string& script, const std::map<std::string, std::string>& files) {
    for (const auto& [path, content] : files) write_file(dir / path, content);
    auto repo = git::Repository::create(dir.path(), "main", {"test", "t@t"}, "init");
    if (!repo) throw std::runtime_error(repo.error().message);
    model = std::make_unique<ScriptedModel>(script, (logs / "requests.jsonl").string());
    auto s = TaskStore::open((dir / ".loopr/state").string(), {.sync = false});
    if (!s) throw std::runtime_error(s.error().message);
    store = std::move(s).value();
    journal = std::make_unique<engine::LoopJournal>(*store, pool, bus);
    config->llm.stream = false;
    config->llm.max_retries = 2;
    config->limits.max_runtime = std::chrono::hours(1);
    config->limits.min_free_space = 0;  // its store may be on a small /dev/shm (Docker: 64 MiB)
    bus.subscribe([this](const Event& e) { published.push_back(e); });
  }

  /// Builds the client and the rest once the test has set `config` the way it wants.
  engine::EngineContext& engine() {
    if (ctx) return *ctx;
    client = model->client(*config);
    engine::SchedulerOptions options = engine::SchedulerOptions::from_config(*config);
    scheduler = std::make_unique<engine::Scheduler>(io.get_executor(), options);
    runners = std::make_unique<tools::RunnerSlots>(config->concurrency);
    llm::RetryPolicy retry;
    retry.max_retries = config->llm.max_retries;
    retry.initial_backoff = std::chrono::milliseconds(1);
    retry.max_backoff = std::chrono::milliseconds(2);
    ctx = std::make_unique<engine::EngineContext>(engine::EngineContext{
        io, pool, *journal, config, RepoPaths(dir.path()), *client, *scheduler, *runners,
        executor, *prompt_source, costs, retry, std::chrono::milliseconds(1)});
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
  std::vector<nlohmann::json> requests_of(const std::string& id) const {
    return model->requests_of(id);
  }

  ~EngineKit() {
    if (manager_) wait(manager_->shutdown(std::chrono::seconds(5)));
    manager_.reset();
    io.restart();
    io.run_for(std::chrono::milliseconds(200));
    pool.join();
  }
};

}  // namespace loopr::testing
