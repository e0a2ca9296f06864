// Files that must not outlive the sandbox in a loop's worktree (issue 28): FIFOs, sockets and
// device nodes (a FIFO named `.gitignore` blocks every reader, libgit2 included, forever), and
// setuid/setgid bits (the worktree lives on the host, owned by the daemon's user, who may be
// root). Swept after every command and before every checkpoint; the sandbox's seccomp filter
// refuses the bits in the first place, this is the second line (and the only one for
// `sandbox: none`). Like rsync without --specials: only regular files, folders and symlinks stay.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace loopr {

struct SweepReport {
  std::vector<std::string> removed;   ///< `path (a FIFO)`, relative to the swept folder
  std::vector<std::string> stripped;  ///< files whose setuid/setgid bits were cleared
  std::vector<std::string> failed;    ///< `path: why` for what could not be removed or cleared

  bool empty() const { return removed.empty() && stripped.empty() && failed.empty(); }
};

/// Walks `root` (never following a symlink, never opening anything but folders; `.git` is left
/// alone) and removes every FIFO, socket and device node, and clears the setuid and setgid bits
/// of every file (a setuid file with other hard links is removed instead: its bits belong to
/// the other name too). A `.gitignore`, `.gitattributes` or `.gitmodules` that is a symlink
/// (libgit2 reads through it) stays only when it leads to a regular file inside `root`. A folder
/// nested too deep to walk is reported as failed (unchecked). Safe to run on a folder nothing
/// runs in any more.
///
/// `visit`, when given, is called for everything the sweep leaves in place, in the walk's
/// (depth-first) order: a folder with null before its contents, a regular file or a symlink
/// with its lstat data (after any bits were cleared). A folder that cannot be opened is then
/// reported as failed (what the caller was shown is not the whole worktree).
using SweepVisitor = std::function<void(const std::string& rel, const struct stat* st)>;
SweepReport sweep_worktree(const std::filesystem::path& root, const SweepVisitor* visit = nullptr);

/// What a sweep did, for a command's output (the model reads it) and the logs: one
/// `[loopr: …]` line per kind, or "" when it did nothing.
std::string describe(const SweepReport& report);

}  // namespace loopr
