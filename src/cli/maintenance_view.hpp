// How `loopr stats` and `loopr gc` print their answers (the API's typed answers, include/loopr/api/maintenance.hpp) for
// people; pure functions, unit-tested without a daemon.
#pragma once

#include <loopr/api/maintenance.hpp>
#include <string>

#include "cli/terminal.hpp"

namespace loopr::cli {

/// `loopr stats`: one aligned row per plan (verdict, cost, tokens, model calls, iterations,
/// loops by outcome, wall time) and a total row.
std::string render_stats(const api::StatsView& stats, const Style& style);

/// `loopr gc`: one line per thing removed (or, in a dry run, to be removed), then the sum.
std::string render_gc(const api::GcView& report, const Style& style);

}  // namespace loopr::cli
