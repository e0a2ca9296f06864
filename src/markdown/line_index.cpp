#include "markdown/line_index.hpp"

#include <algorithm>

#include "markdown/plain_text.hpp"

namespace loopr::markdown {

LineIndex::LineIndex(std::string_view text) : text_(text) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n' && text[i] != '\r') continue;
    starts_.push_back(start);
    ends_.push_back(i);
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < text.size() || starts_.empty()) {
    starts_.push_back(start);
    ends_.push_back(text.size());
  }
}

std::string_view LineIndex::line(int n) const {
  if (n < 1 || n > count()) return {};
  auto i = static_cast<std::size_t>(n - 1);
  return text_.substr(starts_[i], ends_[i] - starts_[i]);
}

std::string LineIndex::slice(int first, int last) const {
  first = std::max(first, 1);
  last = std::min(last, count());
  while (first <= last && trim(line(first)).empty()) ++first;
  while (last >= first && trim(line(last)).empty()) --last;
  std::string out;
  for (int n = first; n <= last; ++n) {
    if (n > first) out += '\n';
    out += line(n);
  }
  return out;
}

}  // namespace loopr::markdown
