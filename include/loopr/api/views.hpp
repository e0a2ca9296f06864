// What the daemon's API shows, typed: a loop row (`GET /v1/loops`), a plan row's tree fields, a
// loop's detail (`GET /v1/loops/{id}`) and the daemon's health (`GET /v1/health`). The daemon
// encodes these and the CLI decodes them, with one codec each way (src/daemon/API.md has the
// JSON). Fields a newer daemon adds that this loopr does not know are kept in `extra`.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/end_reason.hpp>
#include <loopr/core/iteration_outcome.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/core/tree_verdict.hpp>

namespace loopr::api {

/// An integration check's `result` values.
inline constexpr const char* kGateChecking = "checking";
inline constexpr const char* kGatePassed = "passed";
inline constexpr const char* kGateFailed = "failed";
inline constexpr const char* kGateForced = "forced";

/// The key of the total in counts keyed by status (`loops` of health and stats).
inline constexpr const char* kTotal = "total";

/// An iteration record's `status` (src/daemon/API.md): what the iteration came to.
using IterationResult = IterationOutcome;

/// The plan's integration gate: its last check of the integration tip.
struct IntegrationView {
  std::string result;  ///< checking | passed | failed | forced
  std::string sha, summary, output, log;
  int fix_loops = 0;
};

/// `merge: pr`: the plan's pull request and its CI (`show --json` key `pr`).
struct PrView {
  int number = 0;
  std::string url;
  /// open | closed | merged (none: null; also a word this loopr does not know)
  PullRequestState state = PullRequestState::none;
  /// pending | passed | failed | skipped (none: null, not pushed yet; also an unknown word)
  PrChecks checks = PrChecks::none;
  std::string head;    ///< the commit pushed
  std::string failing; ///< the failing checks (empty: null)
  std::string error;   ///< what failed pushing or at the forge, and the retry (empty: null)
  int ci_fix_loops = 0;
};

/// A plan's forecast at the gate.
struct ForecastView {
  double cost_usd = 0, low = 0, high = 0;
  int loops = 0, specs = 0, phases = 0, model_calls = 0;
  std::int64_t duration_ms = 0;
  std::string basis;
  int plan_iteration = 0;
  std::string made_at;
  double max_cost_usd = 0;
  bool over_limit = false;
  std::string max_cost_source;  ///< limits.max_cost_usd, or submit --max-cost (the request's)
};

/// A plan's own limits (`submit --max-cost/--max-runtime/--max-iterations`); unset: null.
struct BudgetView {
  std::optional<double> max_cost_usd;
  std::optional<std::string> max_runtime;  ///< a duration, e.g. `2h`
  std::optional<int> max_iterations;
};

/// What a plan's tree really spent, once it ended.
struct ActualView {
  double cost_usd = 0;
  int loops = 0, model_calls = 0;
  std::int64_t duration_ms = 0;
};

/// A plan's baseline check: the project's tests on the integration branch before any code loop.
struct BaselineView {
  std::string result;  ///< checking | passed | failed | unavailable
  std::string sha, summary, output, log;
  std::int64_t duration_ms = 0, setup_ms = 0;
  std::vector<std::string> outputs;  ///< untracked paths the tests left behind (never committed)
};
inline constexpr const char* kBaselineChecking = "checking";
inline constexpr const char* kBaselinePassed = "passed";
inline constexpr const char* kBaselineUnavailable = "unavailable";

/// A plan's whole tree's tokens and the prompt cache's part of them (`tree_usage` of the plan's
/// detail), from every loop's records, invalidated ones included (their tokens were spent).
struct TreeUsageView {
  std::int64_t input_tokens = 0, output_tokens = 0;  ///< input_tokens: the uncached rest
  std::int64_t cache_read_tokens = 0, cache_write_tokens = 0;
  double uncached_cost_usd = 0;  ///< what the same calls would have cost without the cache
};

/// The share of input read from the prompt cache: read / (input + read + write); 0 without input.
double cache_hit_share(std::int64_t input, std::int64_t read, std::int64_t write);
/// The prompt cache's part of some input as `loopr show` and the web page print it:
/// `12,300 read, 4,100 written (68% of input read), $0.42 without the cache` (the cost only when
/// known); empty when nothing was read or written.
std::string cache_summary(std::int64_t input, std::int64_t read, std::int64_t write,
                          std::optional<double> uncached_usd);

/// A row of `GET /v1/loops`: INTERFACE.md's loop with loopr's fields.
struct LoopRow {
  std::string id;
  LoopType type = LoopType::plan;
  LoopStatus status = LoopStatus::pending;
  std::string parent_id;  ///< empty: null (a plan)
  int iteration = 0;
  int max_iterations = 0;
  double cost_usd = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  /// The prompt cache: input read from it and written to it (input_tokens is the uncached rest).
  std::int64_t cache_read_tokens = 0, cache_write_tokens = 0;
  /// A loop's detail: what its calls would have cost without the cache (iteration records';
  /// null in listings, which read no records).
  std::optional<double> uncached_cost_usd;
  std::vector<std::string> artifacts;
  std::string worktree;  ///< empty: null
  std::string branch;    ///< empty: null
  TimestampMs created_at = 0;
  TimestampMs updated_at = 0;
  EndReason end_reason = EndReason::none;
  // loopr's display fields
  std::string plan_id;
  std::string task;
  std::string status_reason;
  std::optional<std::string> question;
  std::optional<std::string> answer;  ///< set when `question` is (null: not answered yet)
  // a plan row's tree (GET /v1/loops without view=interface)
  std::optional<TreeVerdict> tree_verdict;
  std::string base_branch, merged_into_base, merge_error;  ///< empty: null
  std::optional<double> tree_cost_usd;
  std::optional<TreeUsageView> tree_usage;  ///< a plan's detail: its tree's tokens and cache
  std::optional<IntegrationView> integration;
  std::optional<BaselineView> baseline;  ///< a plan row's (null: none ran)
  std::optional<PrView> pr;              ///< a plan row's pull request (null: none, merge: pr)
  /// Fields this loopr does not know, as they came (written back as they are).
  nlohmann::json extra = nlohmann::json::object();

  bool is_plan() const { return type == LoopType::plan; }
};

/// A loop's cache_summary and, for a plan whose detail has its tree's, `; whole tree …` after it:
/// `loopr show`'s `cache:` line and the web page's. Empty: no cache used.
std::string cache_summary(const LoopRow& row);

/// One iteration in a loop's detail.
struct IterationRow {
  int n = 0;
  IterationOutcome status = IterationOutcome::failed;
  std::optional<int> exit_code;
  double cost_usd = 0;
  std::int64_t input_tokens = 0, output_tokens = 0;
  std::int64_t duration_ms = 0;
  std::string summary;
  /// The prompt cache: input read from it and written to it (input_tokens is the uncached
  /// rest), and what the iteration would have cost without it.
  std::int64_t cache_read_tokens = 0, cache_write_tokens = 0;
  double uncached_cost_usd = 0;
  /// An agent CLI on a subscription login: the cost it reported, which nobody is billed per
  /// token (`cost_usd` holds it only under limits.count_subscription_cost); absent otherwise.
  std::optional<double> notional_cost_usd;
};

/// `GET /v1/loops/{id}`.
struct LoopDetail {
  LoopRow loop;  ///< its `extra` holds the detail's unknown fields too
  std::vector<IterationRow> iterations;
  std::string validation_output;
  std::string progress;
  std::string input_artifact;
  std::vector<std::string> conflicts;
  std::optional<ForecastView> forecast;
  std::optional<ActualView> actual;
  std::optional<BudgetView> budget;
};

/// The executor's load in the health answer.
struct ExecutorView {
  std::string kind;  ///< local | slurm
  int jobs_queued = 0, jobs_running = 0;
  int jobs_cleaning = 0;  ///< cancelled Slurm jobs the cluster still lists
  bool slurm() const { return kind == "slurm"; }
};

/// The health answer's sandbox.
struct SandboxView {
  bool present = false;  ///< false: null (a daemon without one)
  std::string kind, description;
  bool confined = true, available = true;
  std::string problem;  ///< why it is not available (empty: null)
  std::optional<ExecutorView> executor;
  nlohmann::json extra = nlohmann::json::object();
};

/// The daemon's last look at the disk (limits.min_free_space).
struct DiskView {
  std::string dir;
  std::int64_t free_mib = 0, min_free_mib = 0;
  bool full = false;
  int paused_loops = 0;  ///< loops paused for want of space
};

/// The web UI in the health answer.
struct WebView {
  std::string url;
  int port = 0;
};

/// `GET /v1/health`: the daemon, its sandbox and its loops.
struct Health {
  int pid = 0;
  std::string started_at;
  std::int64_t uptime_s = 0;
  std::string repo;
  int active_runs = 0;
  bool stopping = false;
  bool draining = false;  ///< a drained stop: iterations in flight finish, no new one starts
  SandboxView sandbox;
  std::optional<DiskView> disk;  ///< null: not looked at
  std::optional<WebView> web;    ///< the web UI while it runs (null: not serving)
  std::map<std::string, int> loops;         ///< "total" and one count per status
  nlohmann::json extra = nlohmann::json::object();
};

nlohmann::json to_json(const LoopRow& row);
LoopRow loop_row_from_json(const nlohmann::json& j);
nlohmann::json to_json(const IterationRow& it);
IterationRow iteration_from_json(const nlohmann::json& j);
nlohmann::json to_json(const LoopDetail& d);
LoopDetail loop_detail_from_json(const nlohmann::json& j);
nlohmann::json to_json(const PrView& p);
nlohmann::json to_json(const ForecastView& f);
ForecastView forecast_from_json(const nlohmann::json& j);
nlohmann::json to_json(const ActualView& a);
ActualView actual_from_json(const nlohmann::json& j);
nlohmann::json to_json(const BudgetView& b);
BudgetView budget_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Health& h);
Health health_from_json(const nlohmann::json& j);

/// A `{"loops":[…]}` document (`list`, `watch`).
std::vector<LoopRow> loop_rows_from_json(const nlohmann::json& j);

/// The row as the daemon makes it from a stored loop (no tree fields: those are the manager's).
LoopRow row_of(const Loop& loop);

}  // namespace loopr::api
