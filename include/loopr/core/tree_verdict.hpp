// The values of a plan tree's verdict (where the whole tree stands), shared by the manager that
// decides it (manager/tree_verdict.hpp) and the clients that show it (the API's plan rows).
#pragma once

#include <optional>
#include <string_view>

namespace loopr {

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
std::optional<TreeVerdict> parse_tree_verdict(std::string_view text);

}  // namespace loopr
