// What a sandboxed command sees, as data: ONE ordered list of entries (docs/security.md, B1).
// The bubblewrap command line is made from it (src/exec/bwrap_args.cpp) and `loopr doctor`
// prints it, so what the person reads is what the command gets. Everything not in the list does
// not exist inside. Entries come in mount order: a later entry shadows an earlier one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/config.hpp>

namespace loopr::exec {

struct ExecutorOptions;

enum class ViewKind {
  read_only,   ///< `host` shown read-only at `inside`
  read_write,  ///< `host` shown writable at `inside` (only the worktree and a CLI's own state)
  tmpfs,       ///< an empty private folder in memory of `size` bytes
  empty_file,  ///< an empty file over a host file that holds a secret
  symlink,     ///< `inside` is a link to `host` (a text: /bin -> usr/bin)
  data,        ///< a file made by loopr with the contents of `host` rewritten (the git config)
  devices,     ///< a minimal /dev (null, zero, random, tty…), read-only
  proc,        ///< the sandbox's own /proc (its own processes only)
  marker,      ///< a read-only mount point only loopr sandboxes have (daemons refuse them)
};

/// One line of the view.
struct ViewEntry {
  std::filesystem::path host;    ///< the source on the host ("" for tmpfs, /dev, /proc)
  std::filesystem::path inside;  ///< where the command sees it
  ViewKind kind = ViewKind::read_only;
  std::string why;         ///< one short phrase for `doctor` and docs/security.md
  bool optional = false;   ///< a missing source is skipped (bubblewrap's `-try`)
  std::uint64_t size = 0;  ///< tmpfs only
};

/// Where a loopr sandbox's marker sits; a daemon refuses a peer whose root has it (B2).
inline constexpr const char* kSandboxMarker = "/.loopr-sandbox";

std::string_view view_kind_name(ViewKind kind);

/// The view of a command in `<worktree>` for a daemon of `options.paths` with `config`, for
/// `loopr doctor` (the worktree is shown as the placeholder `workdir`).
std::vector<ViewEntry> describe_sandbox_view(const SandboxConfig& config,
                                             const ExecutorOptions& options,
                                             const std::filesystem::path& workdir);

/// One line per entry: `ro   /usr  (the system's programs)`.
std::string format_view(const std::vector<ViewEntry>& view);

}  // namespace loopr::exec
