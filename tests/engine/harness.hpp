// A whole engine for a test: a real git repository with a loop worktree, a real RocksDB, the
// real mock-llm server over loopback, the real Anthropic client, scheduler, tools and events.
#pragma once

#include <boost/asio/use_future.hpp>
#include <future>
#include <map>

#include <loopr/core/ids.hpp>
#include <loopr/engine/engine.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>

#include "support/fakes/loop_setup.hpp"
#include "support/fakes/test_prompts.hpp"
#include "support/git_repo.hpp"
#include "support/mock_llm.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

/// The text of the first user message of a logged mock-llm request (a string, or its text blocks).
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

struct EngineHarness {
  TempDir dir{"loopr-engine"};
  std::unique_ptr<MockLlm> mock;
  std::unique_ptr<TaskStore> store;
  std::unique_ptr<engine::LoopJournal> journal;
  engine::CostLedger costs;
  std::shared_ptr<Config> config = std::make_shared<Config>();
  net::io_context io;
  net::thread_pool pool{4};
  std::unique_ptr<llm::LlmClient> client;
  std::unique_ptr<engine::Scheduler> scheduler;
  std::unique_ptr<tools::RunnerSlots> runners;
  std::unique_ptr<exec::Executor> executor;  ///< the configured sandbox (bubblewrap by default)
  engine::EventBus bus;
  TestPrompts prompts;
  std::unique_ptr<engine::EngineContext> ctx;
  std::vector<Event> published;
  std::optional<engine::SchedulerOptions> scheduler_options;  ///< default: from config

  /// `files` seed the repository's first commit.
  EngineHarness(const std::string& script, const std::map<std::string, std::string>& files,
                std::vector<std::string> mock_args = {}) {
    for (const auto& [path, content] : files) write_file(dir / path, content);
    auto init = git_init_commit_all(dir.path());
    if (init.exit_code != 0) throw std::runtime_error(init.output);
    mock = std::make_unique<MockLlm>(script, std::move(mock_args));
    auto s = TaskStore::open((dir / ".loopr/state").string(), {.sync = false});
    if (!s) throw std::runtime_error(s.error().message);
    store = std::move(s).value();
    journal = std::make_unique<engine::LoopJournal>(*store, pool, bus);
    config->llm.base_url = mock->url();
    config->llm.max_retries = 3;
    config->limits.max_runtime = std::chrono::hours(1);
    config->limits.min_free_space = 0;  // its store may be on a small /dev/shm (Docker: 64 MiB)
    bus.subscribe([this](const Event& e) { published.push_back(e); });
  }

  /// Builds the client and the rest once the test has set `config` the way it wants.
  engine::EngineContext& engine() {
    if (ctx) return *ctx;
    auto env = [](const char* name) -> std::optional<std::string> {
      if (std::string(name) == "ANTHROPIC_API_KEY" || std::string(name) == "OPENAI_API_KEY")
        return "test-key";
      return std::nullopt;
    };
    auto c = llm::make_client(*config, env, io, pool);
    if (!c) throw std::runtime_error(c.error().message);
    client = std::move(c).value();
    scheduler = std::make_unique<engine::Scheduler>(
        io.get_executor(),
        scheduler_options.value_or(engine::SchedulerOptions::from_config(*config)));
    runners = std::make_unique<tools::RunnerSlots>(config->concurrency);
    executor = exec::make_executor(config->sandbox, exec::ExecutorOptions{RepoPaths(dir.path())});
    llm::RetryPolicy retry;
    retry.max_retries = config->llm.max_retries;
    retry.initial_backoff = std::chrono::milliseconds(20);
    retry.max_backoff = std::chrono::milliseconds(200);
    ctx = std::make_unique<engine::EngineContext>(engine::EngineContext{
        io,      pool,     *journal, config, RepoPaths(dir.path()), *client, *scheduler, *runners,
        *executor, prompts, costs,   retry,  std::chrono::milliseconds(10)});
    return *ctx;
  }

  /// Creates loop `id` of `type` with its own branch and worktree, stored pending.
  Loop add_loop(const std::string& id, LoopType type, const std::string& task,
                int max_iterations = 5) {
    return add_loop_with_worktree(*store, dir.path(), id, type, task, max_iterations);
  }

  /// Runs one loop to the end of its run and returns its final record.
  Loop run(const std::string& id,
           std::shared_ptr<engine::LoopControl> control = std::make_shared<engine::LoopControl>(),
           engine::IterationGate* gate = nullptr) {
    engine::LoopRunner runner(engine());
    auto fut = net::co_spawn(io, runner.run(id, control, gate), net::use_future);
    drive_until(fut);
    return fut.get().loop;
  }

  /// Runs the io_context until `fut` is ready (work abandoned by a stop may still be pending).
  template <typename T>
  void drive_until(std::future<T>& fut) {
    io.restart();
    while (fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      io.run_one_for(std::chrono::milliseconds(50));
  }

  /// Background work (a model call abandoned by a stop) refers to the scheduler and client:
  /// end the server so it fails fast, and let it finish before members are destroyed.
  ~EngineHarness() {
    mock.reset();
    io.restart();
    io.run_for(std::chrono::seconds(10));
    pool.join();
  }

  std::vector<IterationRecord> iterations(const std::string& id) {
    return store->iterations(id).value();
  }

  /// The model requests of one loop (by the x-loopr-loop-id header), in order.
  std::vector<nlohmann::json> requests_of(const std::string& id) {
    std::vector<nlohmann::json> out;
    for (auto& r : mock->requests())
      if (r["headers"].value("x-loopr-loop-id", "") == id) out.push_back(r);
    return out;
  }
};

}  // namespace loopr::testing
