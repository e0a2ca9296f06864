// Where a plan's tree stands, from its loops' records: what the API shows on a plan row and what
// `loopr submit --wait` waits for. The manager decides with the same rule (src/manager/).
#pragma once

#include <span>
#include <string_view>

#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/core/tree_verdict.hpp>

namespace loopr::manager {

// The verdict's values (core/tree_verdict.hpp: the CLI reads them too).
using loopr::TreeVerdict;
using loopr::to_string;

/// The verdict on the tree of `plan_id`. `tree`: the loops of that tree (invalidated ones do
/// not count); summaries will do (the tree marks are all it reads besides the fields).
TreeVerdict tree_verdict(std::span<const Loop> tree, std::string_view plan_id, MergeMode mode);

}  // namespace loopr::manager
