#include <loopr/core/budget.hpp>

namespace loopr {

Config with_budget(const Config& config, const RequestBudget& budget) {
  Config c = config;
  if (budget.max_cost_usd > 0) c.limits.max_cost_usd = budget.max_cost_usd;
  if (budget.max_runtime.count() > 0) c.limits.max_runtime = budget.max_runtime;
  if (budget.max_iterations > 0)
    for (auto& [type, loop] : c.loops) loop.max_iterations = budget.max_iterations;
  return c;
}

std::shared_ptr<const Config> tree_config(std::shared_ptr<const Config> config,
                                          const RequestBudget& budget) {
  if (!budget.any() || !config) return config;
  return std::make_shared<const Config>(with_budget(*config, budget));
}

std::string cost_limit_source(const RequestBudget& budget) {
  return budget.max_cost_usd > 0 ? "submit --max-cost" : "limits.max_cost_usd";
}

std::string runtime_limit_source(const RequestBudget& budget) {
  return budget.max_runtime.count() > 0 ? "submit --max-runtime" : "limits.max_runtime";
}

}  // namespace loopr
