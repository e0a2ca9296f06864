// What the CLI shows of a plan's baseline check (the project's tests on the base before any code
// loop): in `show PLAN`, at the gate of `review` and `submit --wait`.
#pragma once

#include <loopr/api/views.hpp>
#include <string>

#include "cli/terminal.hpp"

namespace loopr::cli {

/// `baseline: passed in 2.1 s (setup 0.4 s) on <sha>`, `baseline: checking …`, or
/// `baseline: failed on <sha>: <summary>` and the end of its output; "" when the plan row has no
/// baseline (none ran, or `baseline: off`). Ends with a newline when not empty.
std::string render_baseline(const api::LoopRow& plan, const Style& style);

}  // namespace loopr::cli
