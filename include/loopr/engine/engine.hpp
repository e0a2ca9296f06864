// The loop engine: runs one loop as a coroutine, iteration after iteration, each with a fresh
// model context (DESIGN.md "One iteration" and "Stop conditions"). Every decision — continue,
// complete, fail, stop, pause — is made here by deterministic code; the model only writes.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/engine/cost_ledger.hpp>
#include <loopr/engine/event_bus.hpp>
#include <loopr/engine/loop_control.hpp>
#include <loopr/engine/loop_journal.hpp>
#include <loopr/engine/prompt_source.hpp>
#include <loopr/engine/scheduler.hpp>
#include <loopr/exec/executor.hpp>
#include <loopr/llm/client.hpp>
#include <loopr/llm/retry.hpp>
#include <loopr/net/asio.hpp>
#include <loopr/tools/runner_slots.hpp>

namespace loopr::engine {

/// What every loop of a repository shares. Owned by the daemon (or a test); all references
/// outlive every running loop.
struct EngineContext {
  net::io_context& io;
  net::thread_pool& pool;          ///< blocking work: RocksDB, libgit2, tools, processes
  LoopJournal& journal;            ///< every store write, then its events' publication
  std::shared_ptr<const Config> config;  ///< replaced on reload; read at each iteration start
  RepoPaths paths;
  llm::LlmClient& llm;
  Scheduler& scheduler;
  tools::RunnerSlots& runners;
  exec::Executor& executor;        ///< every command of a loop: run_command, validation, stop scripts
  const PromptSource& prompts;
  CostLedger& costs;               ///< each plan tree's spending (`limits.max_cost_usd`)
  llm::RetryPolicy retry;          ///< per model call, before the iteration counts an error
  /// After a model call failed for good, the same iteration waits this, doubled per
  /// consecutive error (capped at a minute), before it is tried again.
  std::chrono::milliseconds error_backoff{1000};
};

/// The manager's say at iteration boundaries (it rebases a loop onto its plan's integration
/// branch there when another loop's work landed in it).
class IterationGate {
 public:
  virtual ~IterationGate() = default;

  struct Verdict {
    bool go_on = true;  ///< false: the run ends (the gate stored the loop's new status itself)
    Loop loop;          ///< the loop as it is stored now
  };
  /// Called before each iteration with the loop's stored record (status running).
  virtual awaitable<Verdict> before_iteration(Loop loop) = 0;
};

/// How a run ended: the loop's final stored record (its status says why the run ended:
/// complete / awaiting_approval / failed / stopped / paused / blocked).
struct RunExit {
  Loop loop;
};

class LoopRunner {
 public:
  explicit LoopRunner(EngineContext& ctx) : ctx_(ctx) {}

  /// Runs loop `loop_id` from its stored state until it completes, fails, stops or pauses. A
  /// pending/paused/blocked/stopped loop is set running first; iteration numbers continue from
  /// the record, so a run after a daemon restart resumes where the store says.
  awaitable<RunExit> run(std::string loop_id, std::shared_ptr<LoopControl> control,
                         IterationGate* gate = nullptr);

 private:
  EngineContext& ctx_;
};

}  // namespace loopr::engine
