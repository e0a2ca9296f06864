// The answers of the maintenance routes, typed: `GET /v1/stats` (what each plan's tree spent)
// and `POST /v1/gc` (what gc removed or would remove). The manager makes these documents
// (manager/stats.hpp, manager/gc.hpp); clients read them here, with one codec each way that
// keeps the JSON as src/daemon/API.md has it.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace loopr::api {

/// What one plan's tree spent (or all trees: `id` empty).
struct SpendView {
  std::string id, task, tree_verdict;  ///< empty for the total
  double cost_usd = 0;
  std::int64_t input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0;
  /// What the same calls would have cost without the prompt cache (cached input at the input
  /// price), and the share of all input read from the cache (0..1).
  double uncached_cost_usd = 0, cache_hit_share = 0;
  int model_calls = 0, iterations = 0;
  std::map<std::string, int> loops;  ///< by status, and "total"
  std::int64_t wall_ms = 0, iteration_ms = 0;
};

/// `GET /v1/stats`.
struct StatsView {
  std::string since;  ///< empty: everything (null)
  std::vector<SpendView> plans;
  SpendView total;
};

/// What gc takes: a loop's worktree, a branch, a stale worktree registration, a leftover folder
/// of `.loopr/archive`, a loop's logs.
enum class GcKind { worktree, branch, registration, folder, logs };
/// What gc does to it.
enum class GcAction { archived, deleted, removed, pruned };
/// The wire's words (`"kind"`, `"action"`); a dry run's form of an action: `would archive` …
const char* to_string(GcKind kind);
const char* to_string(GcAction action);
const char* would(GcAction action);

/// One thing gc removed (or would). A word this loopr does not know (a newer daemon's) reads as
/// a `folder` that was `removed`: its name still says what it was.
struct GcItemView {
  GcKind kind = GcKind::folder;
  std::string name;
  GcAction action = GcAction::removed;
  std::string reason, kept_on, loop_id;
  std::uint64_t bytes = 0;
};

/// `POST /v1/gc`.
struct GcView {
  bool dry_run = false;
  std::vector<GcItemView> removed;
  std::vector<std::string> errors;
  std::uint64_t bytes_freed = 0;
  int worktrees = 0, branches_deleted = 0, branches_archived = 0;
  int logs = 0;                 ///< loops whose logs (`.loopr/logs/loops/<id>/`) went
  std::uint64_t logs_bytes = 0;  ///< what those logs held
};

nlohmann::json to_json(const SpendView& s);
SpendView spend_from_json(const nlohmann::json& j);
nlohmann::json to_json(const StatsView& s);
StatsView stats_from_json(const nlohmann::json& j);
nlohmann::json to_json(const GcView& g);
GcView gc_from_json(const nlohmann::json& j);

}  // namespace loopr::api
