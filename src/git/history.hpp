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

/// The commit a loop's work is measured from: `since` (a full sha or a branch name) met with
/// `head` at their merge base, so a start the branch was rebased past or a base branch that
/// moved on still gives only this branch's own work. Empty `since`, or nothing in common: `head`.
Result<git_oid> start_commit(git_repository* repo, const std::string& since, const git_oid& head);

/// `git diff from...to` with `opts`: the merge base of `a` and `b` (or `a` itself when the
/// histories are unrelated: everything `b` has differs) against `b`, the trees kept with the diff.
/// `what` names them in errors.
struct ForkDiff {
  TreePtr base;
  TreePtr to;
  DiffPtr diff;
};
Result<ForkDiff> fork_diff(git_repository* repo, const git_oid& a, const git_oid& b,
                           const std::string& what, const git_diff_options& opts);

}  // namespace loopr::git::detail
