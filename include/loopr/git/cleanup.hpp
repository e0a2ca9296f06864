// The git side of `loopr gc`: loopr's branches, whether a branch's commits are merged somewhere,
// renaming unmerged work to an archive branch, deleting branches, pruning git's records of
// worktrees whose folder is gone, and the disk a folder takes. Blocking (for a pool), safe from
// any thread (each call opens the repository itself, as repository.hpp says). Every call acts on
// one name it is given; which names are loopr's is the caller's decision (manager/gc.hpp), and
// branches outside `loopr/` are refused here too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/result.hpp>
#include <loopr/git/types.hpp>

namespace loopr::git {

class Cleanup {
 public:
  explicit Cleanup(std::filesystem::path repo_root) : root_(std::move(repo_root)) {}

  /// Every local branch whose name starts with `loopr/`, sorted.
  Result<std::vector<std::string>> loopr_branches() const;
  /// Every worktree git has a record of (Repository::list_worktrees).
  Result<std::vector<WorktreeInfo>> worktrees() const;
  /// True when `branch`'s tip is `into`'s tip or one of its ancestors: its commits are in `into`.
  /// not_found when either branch does not exist.
  Result<bool> merged_into(const std::string& branch, const std::string& into) const;
  /// Deletes a `loopr/` branch; not_found when it is gone already, conflict when it is checked out.
  Result<void> delete_branch(const std::string& branch) const;
  /// Renames a `loopr/` branch to `loopr/archive/<loop_id>` (`-2`, `-3`… when taken), where its
  /// commits are kept; the new name. conflict when it is checked out.
  Result<std::string> archive_branch(const std::string& branch, const std::string& loop_id) const;
  /// When `branch` was last moved or renamed (its newest reflog entry, ms since the epoch; an
  /// archive branch's is when it was archived); nullopt when git keeps no reflog for it.
  Result<std::optional<std::int64_t>> moved_at(const std::string& branch) const;
  /// Drops git's record of worktree `name` when its folder is gone (what `git worktree prune`
  /// does, for this one name); false when there is no such record or its folder exists.
  Result<bool> prune_registration(const std::string& name) const;

 private:
  std::filesystem::path root_;
};

/// Bytes the files under `path` take on disk (their blocks; symbolic links not followed). 0 for
/// a path that does not exist.
std::uint64_t disk_usage(const std::filesystem::path& path);

}  // namespace loopr::git
