// What each plan's tree has spent so far, for `limits.max_cost_usd` (checked before every
// iteration) and for the API's `tree_cost_usd`. The engine adds an iteration's cost right after
// it stored the iteration; the daemon owns the ledger and fills it from the store at start.
// Thread-safe: the engine's limit check reads it on pool threads.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <loopr/core/loop.hpp>

namespace loopr::engine {

class CostLedger {
 public:
  void add(const std::string& plan_id, double usd) {
    std::lock_guard lock(mutex_);
    totals_[plan_id] += usd;
  }

  double total(const std::string& plan_id) const {
    std::lock_guard lock(mutex_);
    auto it = totals_.find(plan_id);
    return it == totals_.end() ? 0.0 : it->second;
  }

  /// Starts again from the loops' recorded usage (every loop of the store).
  void reset(const std::vector<Loop>& loops) {
    std::map<std::string, double> totals;
    for (const Loop& l : loops) totals[l.plan_id] += l.usage.cost_usd;
    std::lock_guard lock(mutex_);
    totals_ = std::move(totals);
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, double> totals_;
};

}  // namespace loopr::engine
