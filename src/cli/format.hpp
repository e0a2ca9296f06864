// How the CLI shows loops, iterations and events: the `--json` shapes of INTERFACE.md, the
// loop tree with aligned columns, `loopr show`'s fields, and one line per event. Pure functions
// of the API's typed views and events (include/loopr/api/; the CLI decodes them in wire.hpp), so
// they are unit-tested without a daemon.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <loopr/api/events.hpp>
#include <loopr/api/views.hpp>
#include <loopr/core/figures.hpp>  // format_cost, format_age, … (used with these renderers)
#include <loopr/core/loop.hpp>

#include "cli/terminal.hpp"

namespace loopr::cli {

/// INTERFACE.md's loop object, exactly its fields (kApiLoopFields), from an API row.
nlohmann::json interface_loop_json(const api::LoopRow& row);
/// INTERFACE.md's `show --json`: the loop plus `"iterations":[{"n","status","exit_code",
/// "cost_usd","duration_ms","summary"}]`, and coordination's `question`, `answer`, `forecast`
/// and `actual` when the detail has them.
nlohmann::json interface_show_json(const api::LoopDetail& detail);
/// The loop object of an action's answer (`approve`, `answer`, …): the interface fields plus
/// the question and answer when there is one.
nlohmann::json interface_action_json(const api::LoopRow& row);

/// One row of the tree: the loop and the box-drawing prefix in front of its id.
struct TreeRow {
  std::string prefix;  ///< e.g. "│  ├─ "
  const api::LoopRow* loop = nullptr;
};

/// The loops (in API tree order) as a tree: children under their parent (by parent_id) in the
/// order given; a loop whose parent is not in the list is a root.
std::vector<TreeRow> tree_rows(const std::vector<api::LoopRow>& loops, bool unicode);

/// `loopr list`: a header and one aligned row per loop (id, type, status, iteration/max, cost,
/// age), status coloured. `marker(loop)` may prefix the status (the live view's spinner).
std::string render_tree_table(const std::vector<api::LoopRow>& loops, const Style& style,
                              TimestampMs now,
                              const std::function<std::string(const api::LoopRow&)>& marker = {});

/// `loopr show`: fields, artifacts, last validation output and the iterations table.
std::string render_loop_details(const api::LoopDetail& detail, const Style& style, TimestampMs now);

/// One line of `loopr logs`: `HH:MM:SS  LOOP  TYPE  details` (local time).
std::string format_event_line(const api::TypedEvent& event, const Style& style);

/// Summary of the health answer for `loopr daemon status`.
std::string render_health(const api::Health& health, const Style& style);

/// The tree's cost: the plan row's `tree_cost_usd` (the daemon's sum) when `loops` has it, else
/// the sum of the rows.
double tree_cost_of(const std::vector<api::LoopRow>& loops);

/// Text the model or its commands wrote (a task, a reason, a summary, a question, output), as
/// the renderers print it: the one place where the terminal sanitiser (core::terminal_text:
/// control sequences shown, never run) applies.
std::string shown(std::string_view text);

/// One line of text: newlines and tabs as spaces, cut to `max` bytes (at a UTF-8 boundary).
std::string one_line(std::string text, std::size_t max = 160);

}  // namespace loopr::cli
