// The protection check's change of a work tree read after a clean checkpoint (issue 47 item 3,
// core/clean_checkpoint.hpp) instead of by a walk of the whole work tree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <loopr/git/worktree.hpp>

namespace loopr::git {

/// What loopr's own file tools wrote since the checkpoint `clean_at` (root-relative paths), when
/// nothing else wrote the work tree since (no command ran there).
struct WrittenSince {
  std::string clean_at;
  std::vector<std::string> paths;
};

/// Worktree::path_changes_since, when the caller knows only `written` changed the work tree
/// since the checkpoint `written.clean_at`. When that checkpoint staged from a complete sweep
/// after a command whose processes are all gone (CleanCheckpoint, still HEAD and still the
/// index file), the same records come from git's objects, the index, those paths and what git
/// did not track then; otherwise from the walk.
Result<std::vector<PathChange>> path_changes_after(const Worktree& wt, const std::string& since,
                                                   const std::vector<std::string>& content_patterns,
                                                   const WrittenSince& written);

/// How many times path_changes_after read the changes without a walk of the work tree (tests).
std::uint64_t changes_read_from_checkpoint();

}  // namespace loopr::git
