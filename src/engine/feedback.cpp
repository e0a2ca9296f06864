#include <loopr/core/process.hpp>
#include <loopr/engine/feedback.hpp>

namespace loopr::engine {

namespace {

std::string heading(const FeedbackEntry& e) {
  if (e.source == FeedbackSource::user) return "Feedback from the user";
  return "Iteration " + std::to_string(e.iteration) + " (" + to_string(e.source) + ")";
}

}  // namespace

std::string render_feedback(const std::vector<FeedbackEntry>& entries, std::size_t budget) {
  if (entries.empty()) return {};
  const FeedbackEntry& newest = entries.back();
  std::string head = "### " + heading(newest) + "\n\n";
  // Reserve room for the cut marker of the newest entry, the heading of the older ones and the
  // "omitted" line, so the whole text stays within `budget`.
  constexpr std::size_t kReserve = 160;
  std::size_t room = budget > head.size() + kReserve ? budget - head.size() - kReserve : 64;
  std::string out =
      head + cap_head_tail(newest.text.empty() ? newest.summary : newest.text, room) + "\n";

  const std::string older_heading = "\n### Earlier iterations (newest first)\n\n";
  std::string older;
  std::size_t omitted = 0;
  for (auto it = entries.rbegin() + 1; it != entries.rend(); ++it) {
    std::string line = "- " + heading(*it) + ": " +
                       (it->summary.empty() ? first_line(it->text) : it->summary) + "\n";
    if (out.size() + older_heading.size() + older.size() + line.size() + 48 > budget) {
      omitted = static_cast<std::size_t>(entries.rend() - it);
      break;
    }
    older += line;
  }
  if (!older.empty() || omitted) {
    out += older_heading + older;
    if (omitted) out += "- (" + std::to_string(omitted) + " older entries omitted)\n";
  }
  return out;
}

}  // namespace loopr::engine
