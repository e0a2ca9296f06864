// Warm build caches per repository (docs/guide.md "Warm caches"): the caches tools keep in a home
// (Go's build and module caches, cargo's registry, npm's, pip's, uv's, ccache, Gradle's) live in
// `.loopr/cache/<name>/` and every sandboxed command of this repository's loops gets them
// read-write at `~/.cache/loopr/<name>` in its (otherwise empty, private) home, with the tool's
// variable naming it. Never another repository's, never the person's own caches (code a loop
// writes there runs only inside this repository's sandboxes). Shared by concurrent commands: each
// tool here locks or writes atomically itself (docs/guide.md says how each one does).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <loopr/core/repo_paths.hpp>

namespace loopr::exec {

/// One cache as the sandbox shows it: `host` (under `.loopr/cache/`) bound read-write at
/// `inside` (under the home the command sees), and `env` set to `inside`.
struct CacheMount {
  std::string env;
  std::filesystem::path host;
  std::filesystem::path inside;
};

/// `.loopr/cache/`: its own `.gitignore` (`*`) keeps it out of git.
std::filesystem::path caches_dir(const RepoPaths& paths);

/// The repository's caches for a sandbox whose home is `home`, in one list (the executor binds
/// them, `doctor` prints them).
std::vector<CacheMount> cache_mounts(const RepoPaths& paths, const std::filesystem::path& home);

/// Makes the folders of `mounts` (and the cache folder's `.gitignore`); false when one cannot be
/// made (the command then runs with that cache cold, in its private home).
bool ensure_cache_dirs(const RepoPaths& paths, const std::vector<CacheMount>& mounts);

}  // namespace loopr::exec
