// What loopr has spent (`loopr stats`): per plan tree and in total, the cost and tokens, model
// calls, iterations, loops by outcome and time, from the store's loop and iteration records.
// Read-only and blocking (for a pool, or the CLI when no daemon holds the store).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/store/task_store.hpp>

namespace loopr::manager {

/// The spending of one plan's tree (or of all of them: `id` empty).
struct SpendStats {
  std::string id;       ///< the plan; empty for the total
  std::string task;     ///< the plan's request
  std::string verdict;  ///< the tree's verdict (tree_verdict.hpp); empty for the total
  Usage usage;          ///< tokens and cost
  /// The same calls without the prompt cache (iteration records' `uncached_cost_usd`; their
  /// cost where a record has none).
  double uncached_cost_usd = 0;
  int model_calls = 0;  ///< model turns of the iterations counted
  int iterations = 0;   ///< iteration records
  /// Loops by their status now (invalidated ones included: their tokens were spent).
  std::map<std::string, int> loops;
  /// Wall-clock time the tree (total: any tree) was at work: from its submit to its last
  /// change, or to now while it runs; the total counts time two trees overlap once.
  std::int64_t wall_ms = 0;
  std::int64_t iteration_ms = 0;  ///< the iterations' own durations, summed (loop time)
  TimestampMs first = 0;          ///< the interval wall_ms measures (0: nothing counted)
  TimestampMs last = 0;
};

struct Stats {
  TimestampMs since = 0;          ///< 0: everything
  std::vector<SpendStats> plans;  ///< plans with anything counted, in id order
  SpendStats total;
};

/// The stats of the records in `loops` and their iterations (`iterations_of`). With `since`,
/// only iterations that ended at or after it count, plus spending without an iteration record
/// (model calls that failed for good) of loops changed since; a plan counts when a loop of its
/// tree changed since. Pure.
Stats compute_stats(std::span<const Loop> loops,
                    const std::map<std::string, std::vector<IterationRecord>>& iterations_of,
                    TimestampMs since, TimestampMs now, MergeMode mode);

/// compute_stats over the whole store. Blocking.
Result<Stats> stats_of_store(const TaskStore& store, TimestampMs since, MergeMode mode);

/// `{"since","plans":[…],"total":{…}}`, each entry `{"id","task","tree_verdict","cost_usd",
/// "input_tokens","output_tokens","cache_read_tokens","cache_write_tokens","uncached_cost_usd",
/// "cache_hit_share","model_calls",
/// "iterations","loops":{"<status>":N,…,"total":N},"wall_ms","iteration_ms"}`.
nlohmann::json to_json(const Stats& stats);

}  // namespace loopr::manager
