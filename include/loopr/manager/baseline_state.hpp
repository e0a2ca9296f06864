// A plan's baseline check (src/manager/baseline.cpp): the project's setup and tests on the plan's
// integration branch before any code loop. It starts when the plan is submitted and runs while
// the plan's own run writes the plan's record, so its state is stored apart from that record
// (meta key `baseline-of/<plan>`): the check never writes the record a run holds, and neither
// waits for the other. The API's plan rows, the gate, `resume` and the manager read it here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace loopr {
class TaskStore;  // store/task_store.hpp: only baseline_of reads it (the rules need no store)
}

namespace loopr::manager {

/// Where a plan's baseline check is: `none` (never started, or the store could not be read),
/// `checking`, or what it came to (`unavailable`: the sandbox or the cluster never ran it).
/// Stored and shown as its text ("" for none).
enum class BaselineResult { none, checking, passed, failed, unavailable };
const char* to_string(BaselineResult result);
BaselineResult parse_baseline_result(std::string_view text);  ///< none for any other text

struct BaselineState {
  BaselineResult result = BaselineResult::none;
  std::string sha;            ///< the commit checked
  std::string summary;        ///< one line
  std::string output;         ///< the end of what it printed (a few KiB)
  std::string log;            ///< the full output, relative to the repository root
  std::int64_t ms = 0;        ///< setup + validation, wall time
  std::int64_t setup_ms = 0;  ///< of which the setup
  std::string fingerprint;    ///< a failing output's normalized fingerprint (`baseline: warn`)
  /// Untracked paths the setup and tests left in the fresh worktree (`coverage/`): never
  /// committed from a loop's worktree (git/test_outputs.hpp).
  std::vector<std::string> outputs;

  bool operator==(const BaselineState&) const = default;
};

/// The store (meta) key of a plan's baseline state.
std::string baseline_state_key(const std::string& plan_id);

nlohmann::json to_json(const BaselineState& state);
BaselineState baseline_state_from_json(const nlohmann::json& j);

/// The plan's baseline state as stored (an empty result: no check was started, or the store
/// could not be read).
BaselineState baseline_of(const TaskStore& store, const std::string& plan_id);

}  // namespace loopr::manager
