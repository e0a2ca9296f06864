// What each plan's tree has spent so far, for `limits.max_cost_usd` (checked before every
// iteration) and for the API's `tree_cost_usd`. The engine adds an iteration's cost right after
// it stored the iteration; the daemon owns the ledger and fills it from the store at start.
// Thread-safe: the engine's limit check reads it on pool threads.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <loopr/core/loop.hpp>

namespace loopr::engine {

class CostLedger {
 public:
  void add(const std::string& plan_id, double usd, std::int64_t input_tokens = 0) {
    std::lock_guard lock(mutex_);
    totals_[plan_id] += usd;
    inputs_[plan_id] += input_tokens;
  }

  /// The tree's input tokens so far, cached ones included (`limits.max_input_tokens`).
  std::int64_t input_tokens(const std::string& plan_id) const {
    std::lock_guard lock(mutex_);
    auto it = inputs_.find(plan_id);
    return it == inputs_.end() ? 0 : it->second;
  }

  double total(const std::string& plan_id) const {
    std::lock_guard lock(mutex_);
    auto it = totals_.find(plan_id);
    return it == totals_.end() ? 0.0 : it->second;
  }

  /// Starts again from the loops' recorded usage (every loop of the store).
  void reset(const std::vector<Loop>& loops) {
    std::map<std::string, double> totals;
    std::map<std::string, std::int64_t> inputs;
    for (const Loop& l : loops) {
      totals[l.plan_id] += l.usage.cost_usd;
      inputs[l.plan_id] +=
          l.usage.input_tokens + l.usage.cache_read_tokens + l.usage.cache_write_tokens;
    }
    std::lock_guard lock(mutex_);
    totals_ = std::move(totals);
    inputs_ = std::move(inputs);
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, double> totals_;
  std::map<std::string, std::int64_t> inputs_;
};

}  // namespace loopr::engine
