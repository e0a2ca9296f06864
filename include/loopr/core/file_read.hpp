// Reading a file loopr does not control the way every such read must go: only a regular file
// (a FIFO is never waited on, a device never read), at most a cap, in chunks (a small file costs
// a small string). `read_file_inside` is for a folder the model writes (a loop's worktree): no
// symlink is followed at any step below the folder; `read_file_at` is its last step, for a folder
// already open (the iteration files' reader, core/iteration_files.hpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace loopr {

/// Why a file was not read.
enum class FileProblem {
  none,
  missing,     ///< nothing at the name (or the folder is not there)
  refused,     ///< something is there that is not read: a symlink (at the file or a folder on the
               ///< way), a FIFO, socket, device or folder, or a path that leaves the folder
  unreadable,  ///< a regular file the reader may not open or read (permissions, I/O)
};

/// A file as read.
struct FileBytes {
  std::optional<std::string> bytes;  ///< as stored (not made UTF-8); nullopt: not read
  bool truncated = false;            ///< longer than the cap: `bytes` holds its first bytes
  FileProblem why = FileProblem::none;
  std::string problem;  ///< why there are no bytes: `plan.md is a symbolic link: not followed` …
};

/// Whether `rel` names a place inside a folder: relative, not empty, no NUL, no `..` or `.git`
/// component (the worktree's `.git` is loopr's, never an artifact).
bool is_inside_path(std::string_view rel);

/// `rel` inside the folder `root`, up to `max_bytes`: never through a symlink (at the file or at
/// any folder below `root`; `root` itself is the caller's path and is followed), only a regular
/// file, opened without waiting (O_NONBLOCK: a FIFO there is refused, not waited on).
FileBytes read_file_inside(const std::filesystem::path& root, std::string_view rel,
                           std::size_t max_bytes);

/// `name` (one name, no `/`) in the open folder `dir` (negative: no folder), up to `max_bytes`:
/// never through a symlink, only a regular file, opened without waiting. `shown` names it in
/// problems. What `read_file_inside` does at its last step, and the iteration files' reader.
FileBytes read_file_at(int dir, const std::string& name, std::size_t max_bytes,
                       const std::string& shown);

}  // namespace loopr
