// What the project module asks of a path, without throwing: a missing or unreadable path is
// neither a file nor a folder.
#pragma once

#include <filesystem>
#include <system_error>

namespace loopr::project {

inline bool is_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

inline bool is_dir(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_directory(p, ec);
}

}  // namespace loopr::project
