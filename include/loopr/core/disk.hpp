// Free disk space, for `limits.min_free_space`: no iteration starts below it, and a write that
// failed for want of space (ENOSPC) pauses the loop instead of failing it (`disk_full`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace loopr {

/// Bytes an unprivileged process may still write on the file system holding `path`
/// (statvfs f_bavail); nullopt when it cannot be asked.
std::optional<std::uint64_t> free_bytes(const std::filesystem::path& path);

/// `disk full: N MiB free in DIR` (README: the reason a paused loop shows).
std::string disk_full_text(std::uint64_t free, const std::string& dir);

/// Whether an error's text is the file system's "no space left" (ENOSPC from git, the store,
/// a file write: `No space left on device`, RocksDB's `NoSpace`, EDQUOT's `Disk quota exceeded`).
bool is_no_space(std::string_view message);

}  // namespace loopr
