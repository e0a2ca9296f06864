// Pure text helpers of the git module (no libgit2): git's path quoting for porcelain output and
// the line cap that keeps a diff small enough for a prompt.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace loopr::git::detail {

/// A path as `git status --porcelain` prints it: unchanged when plain, else in double quotes
/// with C escapes (\t, \", \\, octal for other control bytes). Bytes >= 0x80 are octal-escaped
/// too unless `quote_non_ascii` is false (git's core.quotePath=false).
std::string quote_path(std::string_view path, bool quote_non_ascii = true);

/// Collects streamed text up to `max_lines` lines and `max_bytes` bytes; past that it only counts
/// lines, and finish() appends one line `… N more lines`. Input may arrive in arbitrary pieces.
class LineCapper {
 public:
  LineCapper(std::size_t max_lines, std::size_t max_bytes)
      : max_lines_(max_lines), max_bytes_(max_bytes) {}

  void add(std::string_view text);
  /// The kept text (whole lines only), plus the marker when something was cut.
  std::string finish();
  /// Lines cut so far (a trailing partial line is counted by finish()).
  std::size_t cut_lines() const { return cut_lines_; }

 private:
  void take_line(std::string_view line);  // line includes its '\n' when it has one

  std::size_t max_lines_;
  std::size_t max_bytes_;
  std::string out_;
  std::string pending_;  // a line not yet ended by '\n'
  std::size_t kept_lines_ = 0;
  std::size_t cut_lines_ = 0;
  bool cutting_ = false;
};

}  // namespace loopr::git::detail
