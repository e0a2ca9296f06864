// History and the current commit, for prompts and callers: shared by Repository and Worktree.
#pragma once

#include <string>
#include <vector>

#include "git/libgit2.hpp"

namespace loopr::git::detail {

/// The last `n` commits reachable from `start`, newest first, `<short sha> <subject>` the way
/// `git log --oneline` prints them (short sha: core.abbrev, at least 7, unique in the repo).
Result<std::vector<std::string>> oneline_log(git_repository* repo, const git_oid& start, int n);

/// The commit HEAD resolves to.
Result<git_oid> head_id(git_repository* repo);

/// The full ref HEAD points at (`refs/heads/x`); invalid_argument when HEAD is detached.
Result<std::string> head_branch_ref(git_repository* repo);

}  // namespace loopr::git::detail
