// A request's own limits (`loopr submit --max-cost USD --max-runtime D --max-iterations N`,
// RequestBudget in loop_marks.hpp): stored with the plan (TreeMarks::budget), they replace the
// config's limits for that plan's tree only. `iterate` and `resume` keep them; every tree
// without them uses `.loopr/config.yml`.
#pragma once

#include <memory>
#include <string>

#include <loopr/core/config.hpp>

namespace loopr {

/// The config a tree with `budget` works under: the config with the request's limits in place
/// of the file's (integration.max_fix_iterations stays the file's).
Config with_budget(const Config& config, const RequestBudget& budget);
/// The same, shared: `config` itself when the request set no limit of its own.
std::shared_ptr<const Config> tree_config(std::shared_ptr<const Config> config,
                                          const RequestBudget& budget);

/// Where a tree's cost and runtime limits come from, for reasons a person reads:
/// `submit --max-cost` or `limits.max_cost_usd` (and the same for the runtime).
std::string cost_limit_source(const RequestBudget& budget);
std::string runtime_limit_source(const RequestBudget& budget);

}  // namespace loopr
