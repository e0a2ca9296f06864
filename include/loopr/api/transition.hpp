// The one status change of a loop, with the event that says so: the rules (manager/tree_rules)
// and the journal (engine/loop_journal) both use it, so it depends on core and the events only.
#pragma once

#include <string>
#include <vector>

#include <loopr/core/end_reason.hpp>
#include <loopr/core/event.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/core/result.hpp>

namespace loopr::api {

/// Checks the transition table, then moves `loop` to `to` and appends its `status_changed` event
/// to `out`. The loop and `out` are untouched when it is illegal. `end`: why it stops working
/// (EndReason::none for the statuses that hold none).
Result<void> transition(Loop& loop, LoopStatus to, EndReason end, std::string reason,
                        std::vector<Event>& out);

}  // namespace loopr::api
