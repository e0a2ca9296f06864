// The feedback a loop carries from one fresh-context iteration to the next: what failed and
// why, shown in the prompt under `## Previous Iteration Feedback`. Bounded: the newest entry in
// full, older ones as one-line summaries, the oldest dropped when the budget is spent.
#pragma once

#include <string>
#include <vector>

#include <loopr/core/loop_marks.hpp>

namespace loopr::engine {

using loopr::FeedbackEntry;  // stored with the loop's run marks (core/loop_marks.hpp)

/// Appends one entry to `marks.feedback`, keeping at most `max_entries` (the oldest go first).
void add_feedback(RunMarks& marks, FeedbackEntry entry, std::size_t max_entries = 50);

/// The text for `{{progress}}`, at most `budget` bytes: the newest entry in full (its middle
/// cut if it alone is over budget), then older entries newest-first as one line each.
std::string render_feedback(const std::vector<FeedbackEntry>& entries, std::size_t budget);

/// First non-empty line of `text`, at most `max_len` bytes (for summaries and commit messages).
std::string first_line(const std::string& text, std::size_t max_len = 120);

}  // namespace loopr::engine
