// How the CLI shows loops, iterations and events: the `--json` shapes of INTERFACE.md, the
// loop tree with aligned columns, `loopr show`'s fields, and one line per event. Pure functions
// of the API's JSON (src/daemon/API.md), so they are unit-tested without a daemon.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <loopr/core/loop.hpp>

#include "cli/terminal.hpp"

namespace loopr::cli {

/// INTERFACE.md's loop object, exactly its fields, from an API loop (which has more).
nlohmann::json interface_loop_json(const nlohmann::json& api_loop);
/// INTERFACE.md's `show --json`: the loop plus `"iterations":[{"n","status","exit_code",
/// "cost_usd","duration_ms","summary"}]`.
nlohmann::json interface_show_json(const nlohmann::json& api_loop_detail);

/// `$0.00`; below a cent `$0.004`; zero `$0`.
std::string format_cost(double usd);
/// A compact age or duration: `42s`, `5m`, `3h`, `2d` (`0s` for negatives).
std::string format_age(std::int64_t ms);
/// An elapsed time with seconds: `7s`, `1m05s`, `2h03m`.
std::string format_elapsed(std::int64_t ms);
/// `12,345`.
std::string format_count(std::int64_t n);

/// A loop's string field, "" when missing or null.
std::string str_field(const nlohmann::json& j, const char* key);
/// Milliseconds since the epoch of an ISO timestamp field; 0 when missing or malformed.
TimestampMs time_field(const nlohmann::json& j, const char* key);

/// One row of the tree: the loop and the box-drawing prefix in front of its id.
struct TreeRow {
  std::string prefix;  ///< e.g. "│  ├─ "
  nlohmann::json loop;
};

/// The loops (in API tree order) as a tree: children under their parent (by parent_id) in the
/// order given; a loop whose parent is not in the list is a root.
std::vector<TreeRow> tree_rows(const nlohmann::json& loops, bool unicode);

/// `loopr list`: a header and one aligned row per loop (id, type, status, iteration/max, cost,
/// age), status coloured. `marker(loop)` may prefix the status (the live view's spinner).
std::string render_tree_table(const nlohmann::json& loops, const Style& style, TimestampMs now,
                              const std::function<std::string(const nlohmann::json&)>& marker = {});

/// `loopr show`: fields, artifacts, last validation output and the iterations table.
std::string render_loop_details(const nlohmann::json& detail, const Style& style, TimestampMs now);

/// One line of `loopr logs`: `HH:MM:SS  LOOP  TYPE  details` (local time).
std::string format_event_line(const nlohmann::json& event, const Style& style);

/// Summary of the health answer for `loopr daemon status`.
std::string render_health(const nlohmann::json& health, const Style& style);

}  // namespace loopr::cli
