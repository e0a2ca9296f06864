#include "store/loop_summaries.hpp"

#include <mutex>

#include <loopr/core/text.hpp>

namespace loopr {

Loop loop_summary(const Loop& loop) {
  Loop s = loop;
  std::string().swap(s.progress);  // frees it (assigning "" would keep the capacity)
  s.run = RunMarks{};
  s.unknown_marks = nlohmann::json::object();
  return s;
}

namespace store_detail {

std::string summary_text(const Loop& summary) { return json_text(to_store_json(summary)); }

Result<Loop> summary_from_text(std::string_view text) {
  auto json = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (json.is_discarded())
    return make_error(ErrorCode::io, "a loop summary in the store's index is not JSON");
  return loop_from_store_json(json);
}

// nlohmann's lexer reads ~80 MB/s, the whole cost of counting 10,000 loops: records are
// nlohmann's own compact dumps, so a scan that skips strings (and their escapes) and tracks
// nesting finds the key.
std::optional<std::string_view> top_level_status(std::string_view j) {
  int depth = 0;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const char c = j[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == '"') {
      const std::size_t begin = ++i;
      while (i < j.size() && j[i] != '"') i += j[i] == '\\' ? 2 : 1;
      if (i >= j.size()) return std::nullopt;
      // Only a key is followed by ':'.
      if (depth != 1 || j.substr(begin, i - begin) != "status" || i + 2 >= j.size() ||
          j[i + 1] != ':')
        continue;
      if (j[i + 2] != '"') return std::nullopt;
      const std::size_t value = i + 3, close = j.find('"', value);
      if (close == std::string_view::npos) return std::nullopt;
      return j.substr(value, close - value);
    }
  }
  return std::nullopt;
}

bool SummaryCopy::kept() const {
  std::shared_lock lock(mutex_);
  return kept_;
}

void SummaryCopy::install(std::map<std::string, Loop, std::less<>> made) {
  std::unique_lock lock(mutex_);
  by_id_ = std::move(made);
  kept_ = true;
}

void SummaryCopy::keep(const std::vector<Loop>& summaries) {
  std::unique_lock lock(mutex_);
  if (!kept_) return;
  for (const Loop& l : summaries) by_id_.insert_or_assign(l.id, l);
}

std::optional<std::vector<Loop>> SummaryCopy::sorted(
    const std::function<bool(const Loop&)>* keep) const {
  std::shared_lock lock(mutex_);
  if (!kept_) return std::nullopt;
  std::vector<Loop> out;
  if (!keep) out.reserve(by_id_.size());
  for (const auto& [id, l] : by_id_)
    if (!keep || (*keep)(l)) out.push_back(l);
  return out;
}

std::optional<std::map<LoopStatus, std::size_t>> SummaryCopy::count_by_status() const {
  std::shared_lock lock(mutex_);
  if (!kept_) return std::nullopt;
  std::map<LoopStatus, std::size_t> counts;
  for (const auto& [id, l] : by_id_) ++counts[l.status];
  return counts;
}

}  // namespace store_detail
}  // namespace loopr
