// The feedback a loop carries from one fresh-context iteration to the next: what failed and
// why, shown in the prompt under `## Previous Iteration Feedback`. Bounded: the newest entry in
// full, older ones as one-line summaries, the oldest dropped when the budget is spent.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace loopr::engine {

struct FeedbackEntry {
  int iteration = 0;      ///< 0 for feedback from the user (`loopr iterate --feedback`)
  std::string source;     ///< validation | judge | user | engine
  std::string summary;    ///< one line
  std::string text;       ///< the full feedback (validation output tail, problems …)
};

nlohmann::json to_json(const FeedbackEntry& entry);
FeedbackEntry feedback_from_json(const nlohmann::json& json);

/// Entries kept in a loop's `context["feedback"]` (oldest first).
std::vector<FeedbackEntry> feedback_entries(const nlohmann::json& context);
/// Appends one entry, keeping at most `max_entries` (the oldest go first).
void add_feedback(nlohmann::json& context, FeedbackEntry entry, std::size_t max_entries = 50);

/// The text for `{{progress}}`, at most `budget` bytes: the newest entry in full (its middle
/// cut if it alone is over budget), then older entries newest-first as one line each.
std::string render_feedback(const std::vector<FeedbackEntry>& entries, std::size_t budget);

/// First non-empty line of `text`, at most `max_len` bytes (for summaries and commit messages).
std::string first_line(const std::string& text, std::size_t max_len = 120);

}  // namespace loopr::engine
