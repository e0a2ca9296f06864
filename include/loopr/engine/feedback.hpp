// The feedback a loop carries from one fresh-context iteration to the next: what failed and
// why, shown in the prompt under `## Previous Iteration Feedback`. Bounded: the newest entry in
// full, older ones as one-line summaries, the oldest dropped when the budget is spent.
#pragma once

#include <string>
#include <vector>

#include <loopr/core/loop_marks.hpp>
#include <loopr/core/text.hpp>

namespace loopr::engine {

using loopr::add_feedback;   // core/loop_marks.hpp
using loopr::FeedbackEntry;  // stored with the loop's run marks (core/loop_marks.hpp)
using loopr::first_line;     // core/text.hpp

/// The text for `{{progress}}`, at most `budget` bytes: the newest entry in full (its middle
/// cut if it alone is over budget), then older entries newest-first as one line each.
std::string render_feedback(const std::vector<FeedbackEntry>& entries, std::size_t budget);

}  // namespace loopr::engine
