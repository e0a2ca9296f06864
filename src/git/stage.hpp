// Staging a work tree the way `git add -A` does, for a checkpoint (git/checkpoint.cpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/sweep_handoff.hpp>

#include "git/libgit2.hpp"

namespace loopr::git::detail {

/// A staged index, and whether staging changed it (false: the index file already says the same,
/// so writing it again would only make a new file: a checkpoint skips that).
struct StagedIndex {
  IndexPtr index;
  bool changed = true;
  /// Staged from a handed-over listing (nothing can have written the work tree since that
  /// sweep): what git does not track there after this staging, as CleanCheckpoint::untracked.
  std::optional<std::vector<std::string>> untracked;
};

/// Everything changed in the work tree staged (new and modified files added, deleted ones
/// removed, ignored ones and loopr's private folders skipped), after the special-file sweep
/// (core/worktree_sweep.hpp). One walk does both: the sweep lists what it leaves, and only the
/// paths whose stat data differ from the index (or that git would call racily clean) are hashed.
/// Where that list cannot stand in for git's own walk (a gitlink or a nested repository, a
/// conflict, a case-insensitive index, flags such as skip-worktree), git's walk stages instead.
/// `handed`: the listing of the sweep after the command that just ended (nothing else ran in the
/// work tree since: core/sweep_handoff.hpp) stands for this sweep, when the list can stand in.
Result<StagedIndex> stage_all(git_repository* repo, const std::filesystem::path& path,
                              const SweptListing* handed = nullptr);

/// The same index from the paths loopr's file tools wrote since the checkpoint HEAD is (nothing
/// else wrote there): each is staged, or removed, as `git add -A` would; the rest is HEAD's tree
/// already. The tools write regular files only, so there is nothing to sweep.
Result<StagedIndex> stage_written(git_repository* repo, const std::filesystem::path& path,
                                  const std::vector<std::string>& written);

}  // namespace loopr::git::detail
