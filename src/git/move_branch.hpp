// Moving a branch that may be checked out somewhere: the one place where loopr rewrites a work
// tree's files, shared by rebase (a loop's own worktree) and merge (often the user's main one).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "git/libgit2.hpp"

namespace loopr::git::detail {

/// The work tree whose HEAD is the branch `ref_name` (`refs/heads/…`): the main one or a linked
/// one whose folder exists; nullopt when the branch is not checked out anywhere.
Result<std::optional<std::filesystem::path>> find_checkout(git_repository* main_repo,
                                                           const std::string& ref_name);

/// git_branch_delete without what it costs a daemon: its git_branch_is_checked_out opens every
/// registered worktree (callers ask find_checkout first, under the registry lock), and its
/// git_config_rename_section matches every config entry with a regex, and libgit2 1.5's
/// git_regexp_match leaks pcre2's match data (~20 KiB) on each entry that does not match: ~0.4
/// MiB per ended tree in a long-running daemon (tools/bench/RESULTS.md, the soak). The config is
/// read without a regex; only a branch that has `branch.<name>.*` entries goes through libgit2.
Result<void> delete_branch_ref(git_repository* repo, git_reference* branch);

/// git_branch_move(`branch` → `refs/heads/<new_name>`, no force) with the same config treatment:
/// returns the renamed ref, or GIT_EEXISTS's error code as already_exists.
Result<RefPtr> rename_branch_ref(git_repository* repo, git_reference* branch,
                                 const std::string& new_name);

struct MoveReport {
  enum class Kind {
    moved,          ///< the branch (and its work tree, if any) now is at the new tip
    local_changes,  ///< uncommitted edits in the work tree would be overwritten; nothing changed
    ref_moved,      ///< the branch was no longer at the expected tip; nothing changed
  };
  Kind kind = Kind::moved;
  std::vector<std::string> paths;  ///< local_changes: the edits in the way
};

/// Moves `ref_name` from `old_tip` to `new_tip` (compare-and-swap: only if it still is at
/// `old_tip`). If `checkout` names the work tree where the branch is checked out, its index and
/// files are first brought from old_tip's tree to new_tip's tree with a SAFE checkout (files the
/// user edited and the move does not touch stay as they are; any edit the move would overwrite
/// stops it before a single file is written), then the ref moves. `repo` is any repository
/// handle of the same git directory.
Result<MoveReport> move_branch(git_repository* repo, const std::string& ref_name,
                               const git_oid& old_tip, const git_oid& new_tip,
                               const std::optional<std::filesystem::path>& checkout,
                               const std::string& reflog_message);

}  // namespace loopr::git::detail
