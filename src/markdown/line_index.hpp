// Private to the markdown module: the artifact's text by line number, counted exactly as cmark
// counts (`\n`, `\r\n` and a lone `\r` each end a line), so AST lines can be turned back into
// source text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace loopr::markdown {

class LineIndex {
 public:
  explicit LineIndex(std::string_view text);

  /// Number of lines (a final line ending does not start another line).
  int count() const { return static_cast<int>(starts_.size()); }

  /// Line `n` (1-based) without its line ending; empty when out of range.
  std::string_view line(int n) const;

  /// Lines `first..last` joined with '\n' (the original endings dropped), with blank lines at
  /// both ends left out. Empty when the range is empty or out of range.
  std::string slice(int first, int last) const;

 private:
  std::string_view text_;
  std::vector<std::size_t> starts_;  ///< offset of each line's first byte
  std::vector<std::size_t> ends_;    ///< offset just past each line's content (before its ending)
};

}  // namespace loopr::markdown
