#include <sys/statvfs.h>

#include <loopr/core/disk.hpp>

namespace loopr {

std::optional<std::uint64_t> free_bytes(const std::filesystem::path& path) {
  struct statvfs s {};
  if (::statvfs(path.c_str(), &s) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(s.f_bavail) * static_cast<std::uint64_t>(s.f_frsize);
}

std::string disk_full_text(std::uint64_t free, const std::string& dir) {
  return "disk full: " + std::to_string(free / (1024 * 1024)) + " MiB free in " + dir;
}

bool is_no_space(std::string_view m) {
  return m.find("No space left on device") != std::string_view::npos ||
         m.find("NoSpace") != std::string_view::npos ||
         m.find("No space left") != std::string_view::npos ||
         m.find("Disk quota exceeded") != std::string_view::npos ||
         m.find("ENOSPC") != std::string_view::npos;
}

}  // namespace loopr
