// Where a plan's tree stands, from its loops' records: what the API shows on a plan row and what
// `loopr submit --wait` waits for. The manager decides with the same rule (src/manager/).
#pragma once

#include <span>
#include <string_view>

#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>

namespace loopr::manager {

enum class TreeVerdict {
  running,       ///< a loop runs, waits (for a slot, a person, a rebase) or is owed a step
  failed,        ///< nothing more happens without a person: a loop failed or was stopped
  merging,       ///< every loop complete; the merge into the base branch is next (merge: auto)
  complete,      ///< every loop complete; waits for `loopr merge` (merge: manual)
  merged,        ///< merged into the base branch
  merge_failed,  ///< the merge into the base branch could not be made (the plan says why)
  validating,    ///< every loop complete; the integration tip's tests run (the gate)
  integration_failed,  ///< the integration tip fails its tests and no fix loop made it pass:
                       ///< the plan is blocked until a person acts
};

/// `running`, `failed`, `merging`, `complete`, `merged`, `merge_failed`, `validating`,
/// `integration_failed`.
const char* to_string(TreeVerdict verdict);

/// The verdict on the tree of `plan_id`. `tree`: the loops of that tree (invalidated ones do
/// not count); summaries will do (the tree marks are all it reads besides the fields).
TreeVerdict tree_verdict(std::span<const Loop> tree, std::string_view plan_id, MergeMode mode);

}  // namespace loopr::manager
