// One work tree (a loop's `.loopr/worktrees/<id>`, or the main one): checkpoint commits, the
// state shown in prompts (status, diff, log, head), and rebasing its branch. Blocking calls.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <loopr/core/result.hpp>
#include <loopr/git/types.hpp>

namespace loopr::git {

/// A handle on a work tree folder: just its path, so it is cheap to copy and safe to use from
/// any thread (each call opens its own libgit2 repository, see repository.hpp).
class Worktree {
 public:
  /// The work tree whose top folder is exactly `path` (no search upwards, so a typo can never
  /// end up committing in the user's main work tree). not_found if `path` is not one.
  static Result<Worktree> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }

  /// Commits everything changed in the work tree (new, modified, deleted files; `.gitignore`
  /// honoured; loopr's private `.loopr/state|run|worktrees|archive|logs/` never) on its branch,
  /// author and committer from git config or `loopr <loopr@localhost>`. No empty commits: when
  /// nothing differs from HEAD the outcome is `nothing_to_commit`.
  Result<CommitOutcome> checkpoint(const std::string& message) const;

  /// `git status --porcelain` (v1) text: `XY path` lines, tracked changes then `??` untracked,
  /// paths quoted the way git quotes them. Empty when clean.
  Result<std::string> status() const;

  /// Unified diff of the work tree against HEAD, untracked (not ignored) files included as new
  /// files: what the next checkpoint would commit. Longer text is cut at `limits` and ends with a
  /// line `… N more lines`.
  Result<std::string> diff(const DiffLimits& limits = {}) const;

  /// The last `n` commits of HEAD, newest first, `<short sha> <subject>` like `git log --oneline`.
  Result<std::vector<std::string>> log(int n) const;

  /// Full sha of HEAD.
  Result<std::string> head_sha() const;

  /// The checked-out branch (short name); invalid_argument when HEAD is detached.
  Result<std::string> branch() const;

  /// Rebases this work tree's branch onto the tip of branch `onto` (a loop onto its plan's
  /// integration branch). The replay happens in memory: only when every commit applies is the
  /// branch moved and the work tree checked out at the new tip (uncommitted edits that the new
  /// tip does not touch are carried along, like `git rebase --autostash` minus the stash). On a
  /// conflict, or when uncommitted edits would be overwritten, the branch, index and files are
  /// exactly as before and the outcome lists the paths.
  Result<RebaseOutcome> rebase_onto(const std::string& onto) const;

 private:
  explicit Worktree(std::filesystem::path path) : path_(std::move(path)) {}
  friend class Repository;

  std::filesystem::path path_;
};

}  // namespace loopr::git
