// Questions about a user's work tree that need no Repository (which refuses a repository
// without a commit): what git ignores there, and whether a merge or rebase is half done.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <loopr/core/result.hpp>

namespace loopr::git {

/// Whether git ignores `path` (relative to the work tree `root`, `/`-separated; a folder ends in
/// `/`), as `git check-ignore` would say. The folder need not exist.
Result<bool> is_ignored(const std::filesystem::path& root, const std::string& path);

/// The operation left in progress in the work tree at `root` (`merge`, `rebase`, `cherry-pick`,
/// `revert`, `bisect`, `apply-mailbox`), or an empty string when none is.
Result<std::string> operation_in_progress(const std::filesystem::path& root);

/// How many times this process walked a whole work tree for git (a status, a diff against the
/// work tree, a checkpoint's staging of everything): for tests that show a step did not.
std::uint64_t work_tree_reads();

/// How many checkpoints of this process staged through libgit2's own walk of the work tree
/// (`git_index_add_all`) rather than from the sweep's one walk (git/stage.hpp): for tests.
std::uint64_t checkpoint_git_walks();

namespace detail {
void count_work_tree_read();
}  // namespace detail

}  // namespace loopr::git
