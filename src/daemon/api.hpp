// The control API's routes (src/daemon/API.md) over the LoopManager and the store.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include <loopr/api/answers.hpp>
#include <loopr/api/views.hpp>
#include <loopr/daemon/http.hpp>
#include <loopr/engine/engine.hpp>
#include <loopr/manager/baseline_state.hpp>
#include <loopr/manager/loop_manager.hpp>
#include <loopr/store/task_store.hpp>

namespace loopr::daemon {

struct ApiInfo {
  int pid = 0;
  TimestampMs started_at = 0;
  std::string repo;
  /// `POST /v1/shutdown`; a drain > 0 lets the iterations in flight finish first.
  std::function<void(std::chrono::milliseconds drain)> request_shutdown;
  std::function<bool()> shutting_down;
  std::function<bool()> draining;
  /// Where the routes read the store. Its own pool, so that `loopr list` and health answer while
  /// the engine's pool is queued up with git work (1,000 worktrees at start); null: the engine's.
  net::thread_pool* read_pool = nullptr;
  /// The command executor's state for health: kind, confined, description, available, problem.
  std::function<nlohmann::json()> sandbox;
  /// The web UI (`POST /v1/web`): starts it on `port` (0: a free one) unless it runs, and says
  /// where; conflict when it runs on another port than asked.
  std::function<Result<api::WebStarted>(std::uint16_t port)> start_web;
  /// `POST /v1/web/stop`: stops it (its token dies with it); false when it was not running.
  std::function<bool()> stop_web;
  /// For health: `{"url","port"}` while it runs, else null.
  std::function<nlohmann::json()> web;
  /// The last look at the disk (limits.min_free_space): dir, free_mib, min_free_mib, full,
  /// paused_loops.
  std::function<nlohmann::json()> disk;
};

class Api {
 public:
  Api(engine::EngineContext& ctx, manager::LoopManager& manager, ApiInfo info);
  ~Api();

  Routes routes();

  awaitable<Response> handle(Request request);
  static bool is_stream(const Request& request);
  awaitable<void> stream(Request request, std::shared_ptr<EventStream> out);

  /// What the routes work on (the engine's context, the manager, ApiInfo); api.cpp's own.
  struct State;

 private:
  std::shared_ptr<State> state_;
};

/// The API's row of a loop (include/loopr/api/views.hpp): INTERFACE.md's shape plus `plan_id`,
/// `task`, `status_reason` and its open question (`question`, `answer`: null until answered).
api::LoopRow loop_row(const Loop& loop);
/// Its JSON (the one codec: api::to_json).
nlohmann::json loop_json(const Loop& loop);

/// A plan row's tree fields: `tree_verdict`, `base_branch`, `merged_into_base` (the base tip
/// after the merge, or null), `merge_error` (or null), the integration gate's last check and
/// the baseline check (`baseline`: stored apart from the plan's record, manager::baseline_of).
void add_tree_fields(api::LoopRow& row, const Loop& plan, std::span<const Loop> tree,
                     MergeMode mode, const manager::BaselineState& baseline);

/// The question a loop has open: the run's, or (listings carry no run marks) a waiting loop's
/// status reason; empty without one.
std::string open_question(const Loop& loop);

/// A loop's open question: `question` and `answer` (null until answered); nothing without one.
void add_question_fields(nlohmann::json& row, const Loop& loop);

/// A plan's `forecast` (manager/forecast.hpp, plus `max_cost_usd` and `over_limit`) and, when
/// its tree ended, `actual` {cost_usd, loops, model_calls, duration_ms}. Blocking (store).
void add_gate_fields(api::LoopDetail& detail, const TaskStore& store, const Loop& plan,
                     std::span<const Loop> tree, const Config& config);

/// A loop's `uncached_cost_usd` (from its iteration records, `iterations`) and, for a plan,
/// `tree_usage`: its tree's tokens and the prompt cache's part (each loop's records read).
/// Blocking (store). Figures to show: what cannot be read is left out (and logged).
void add_usage_fields(api::LoopRow& row, const TaskStore& store, const Loop& loop,
                      const std::vector<IterationRecord>& iterations, std::span<const Loop> tree,
                      MergeMode mode);

/// HTTP status for an Error from the manager or the store.
int http_status(const Error& error);

}  // namespace loopr::daemon
