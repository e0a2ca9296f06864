// Private to the markdown module: the `Files: a, b` line of a spec's phase item and of a phase
// artifact (the files that phase owns; code spans already reduced to their text).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "markdown/plain_text.hpp"

namespace loopr::markdown {

/// `Files: …` (any case), the bullet already removed.
inline bool starts_with_files(std::string_view line) {
  return lower(line.substr(0, 6)) == "files:";
}

/// The comma-separated items after `Files:`, trimmed, empty ones dropped.
inline std::vector<std::string> split_files(std::string_view list) {
  std::vector<std::string> files;
  while (!list.empty()) {
    std::size_t comma = list.find(',');
    std::string_view part = trim(list.substr(0, comma));
    if (!part.empty()) files.emplace_back(part);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return files;
}

}  // namespace loopr::markdown
