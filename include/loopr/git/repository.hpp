// The git layer (libgit2): a user's repository, its branches, loopr's worktrees, merges.
// Blocking calls meant for a thread pool; every call is safe from any thread at any time.
//
// Thread safety: a Repository holds only paths. Every call takes a git_repository of its own on
// the calling thread (opened, or one an earlier call gave back while nothing the open read has
// changed: src/git/repo_pool.cpp) and gives it back before returning, so no libgit2 handle is
// ever used by two threads at once (libgit2 objects are not thread-safe). What several threads
// or processes share on disk (refs, index files) is guarded by git's own lock files, and every
// branch move is a compare-and-swap on the old tip: a lost race is reported, never a lost commit.
// Adding, archiving and removing worktrees, and a merge's update of a checked-out target, are
// serialized within the process (libgit2 1.5 misjudges "is this branch checked out?" while a
// worktree is half-created; see src/git/libgit2.hpp).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/merge_policy.hpp>
#include <loopr/core/result.hpp>
#include <loopr/git/types.hpp>
#include <loopr/git/worktree.hpp>

namespace loopr::git {

class Repository {
 public:
  /// Opens the repository containing `inside` (any folder in the main work tree or in one of its
  /// linked worktrees; a linked worktree resolves to its main repository). Refuses a bare
  /// repository and one without a commit (ErrorCode::invalid_argument, with what to do).
  static Result<Repository> open(const std::filesystem::path& inside);

  /// Makes a repository in `root` (a folder that may hold files already) with `branch` as its
  /// first branch and `identity` in its own config, and commits every file in it (`.gitignore`
  /// honoured) as the first commit with `message`. already_exists when `root` is a repository.
  static Result<Repository> create(const std::filesystem::path& root, const std::string& branch,
                                   const Identity& identity, const std::string& message);

  /// The main work tree (where `.loopr/` lives).
  const std::filesystem::path& root() const { return root_; }
  /// The shared git directory (`<root>/.git` for an ordinary repository).
  const std::filesystem::path& git_dir() const { return git_dir_; }

  /// The main work tree, for status/diff/log there.
  Worktree main_worktree() const;

  // -- branches

  /// The branch checked out in the main work tree: the base branch a plan starts from and is
  /// merged back into. Never guessed (no `main`/`master`); invalid_argument when HEAD is detached.
  Result<std::string> current_branch() const;
  /// Full sha of a branch's tip; not_found when there is no such branch.
  Result<std::string> branch_sha(const std::string& branch) const;
  Result<bool> has_branch(const std::string& branch) const;
  /// Creates `name` at the tip of `from` (a branch) and returns that sha. already_exists if
  /// `name` exists; invalid_argument for a name git refuses (also a ref below another ref).
  Result<std::string> create_branch(const std::string& name, const std::string& from) const;
  /// Deletes a branch; ErrorCode::conflict when it is checked out in a work tree.
  Result<void> delete_branch(const std::string& name) const;
  /// Local branches whose name starts with `prefix`, sorted.
  Result<std::vector<std::string>> branches(const std::string& prefix = {}) const;
  /// The last `n` commits reachable from `branch`, newest first, as `git log --oneline` prints
  /// them.
  Result<std::vector<std::string>> log(const std::string& branch, int n) const;
  /// Walks `branch`'s first-parent history from its tip (at most `max_commits` commits): the
  /// sha of the first commit whose message makes `stop` true, nullopt when none does.
  Result<std::optional<std::string>> first_parent_where(
      const std::string& branch, const std::function<bool(std::string_view message)>& stop,
      int max_commits) const;
  /// Who loopr's commits are by in this repository (git config, else `loopr <loopr@localhost>`).
  Result<Identity> identity() const;

  // -- worktrees (`.loopr/worktrees/<loop-id>`, registered with git so the CLI sees them)

  /// Adds `.loopr/worktrees/<loop-id>` with `branch` (which must exist and not be checked out)
  /// checked out. A stale registration whose folder was deleted by hand is pruned first; an
  /// existing folder is never overwritten (already_exists).
  Result<Worktree> add_worktree(const std::string& loop_id, const std::string& branch) const;
  /// The existing worktree of a loop; not_found when git has none or its folder is gone.
  Result<Worktree> worktree(const std::string& loop_id) const;
  /// Every linked worktree git knows about (loopr's and the user's), sorted by name.
  Result<std::vector<WorktreeInfo>> list_worktrees() const;
  /// Retires a finished loop's worktree without losing anything: uncommitted work is first
  /// checkpointed with `message`, then the folder and git's registration are removed, and the
  /// branch is renamed to `loopr/archive/<loop-id>` (`-2`, `-3`… if taken). Git keeps the history
  /// reviewable (`git log loopr/archive/<id>`), `git worktree list` stays short, no disk is spent
  /// on old checkouts, and the loop's branch name is free for a re-run. Ignored files (build
  /// output) go with the folder.
  Result<ArchiveOutcome> archive_worktree(const std::string& loop_id,
                                          const std::string& message) const;
  /// Removes a worktree's folder and registration; the branch stays. refuse_if_dirty returns
  /// ErrorCode::conflict when `git status` there would show anything.
  Result<void> remove_worktree(const std::string& loop_id,
                               RemoveMode mode = RemoveMode::refuse_if_dirty) const;

  /// What changed from `from` to `to` (branches or shas), as `git diff --stat` prints it.
  Result<std::string> diff_stat(const std::string& from, const std::string& to) const;
  /// The paths `to` changes since it forked from `from` (the diff from their merge base to
  /// `to`; both branches or shas), sorted: what merging `to` into `from` brings.
  Result<std::vector<std::string>> changed_since_fork(const std::string& from,
                                                      const std::string& to) const;
  /// The same change as a unified diff (`git diff from...to`, renames found, loopr's private
  /// folders left out), cut at `limits` like Worktree::diff. not_found when `from` or `to` is no
  /// branch or sha.
  Result<std::string> diff_since_fork(const std::string& from, const std::string& to,
                                      const DiffLimits& limits) const;

  /// The same change as typed records for the protection rule (core/protected_paths.hpp):
  /// renames found, mode changes told apart, and the content before and after of the changed
  /// files that match `content_patterns` (at most 1 MiB each).
  Result<std::vector<PathChange>> path_changes_since_fork(
      const std::string& from, const std::string& to,
      const std::vector<std::string>& content_patterns = {}) const;

  /// The merge policy (core/merge_policy.hpp) over what `to` commits since its fork from
  /// `from`: git objects only (modes, blob sizes, link targets), never a work tree. The
  /// repository's `core.hooksPath` is read here into `rules.hooks_path` when it is inside it.
  Result<std::vector<HeldPath>> merge_findings(const std::string& from, const std::string& to,
                                               MergeRules rules) const;

  // -- files

  /// The content of `path` (relative to the repository root) as committed at the tip of
  /// `branch`, at most `max_bytes + 1` bytes (so a caller can tell a larger file). not_found when
  /// the branch or the file does not exist (or the path is a folder).
  Result<std::string> read_file(const std::string& branch, const std::string& path,
                                std::size_t max_bytes) const;

  // -- what a killed process leaves in the git folder (only call when nothing else writes it)

  /// Removes git's record of worktree `name` when git cannot use it (a registration killed
  /// while it was being made: the folder is there without the files git needs), so the name can
  /// be used again. False when there was nothing to remove; a usable registration is never
  /// touched.
  Result<bool> drop_broken_worktree_registration(const std::string& name) const;

  /// Removes the lock files of the given branches (`refs/heads/<branch>.lock`) and worktrees
  /// (the lock files git and libgit2 take inside a worktree's record: index, HEAD, ORIG_HEAD,
  /// config) that a killed process left behind; a stale lock fails every later change of what it
  /// locks. Only for names no other process writes (loopr's own branches while its daemon holds
  /// the pid lock). Returns the files removed.
  Result<std::vector<std::string>> remove_stale_locks(
      const std::vector<std::string>& branches, const std::vector<std::string>& worktrees) const;

  // -- merging

  /// Merges branch `source` into branch `target`: fast-forward when target has nothing of its
  /// own, else a merge commit (parents target, source; `message`, or git's default when empty).
  /// A conflict leaves target untouched and lists the paths.
  ///
  /// When target is checked out in a work tree (the base branch usually is, in the user's main
  /// work tree), that work tree's index and files are updated too, the way `git merge` would:
  /// the user's uncommitted edits to files the merge does not touch are kept; if the merge would
  /// overwrite any of them (or an untracked file), nothing changes and the outcome is
  /// `local_changes` with those paths, so a user's edits are never lost. A concurrent move of
  /// target (another merge, a user's commit) is detected by compare-and-swap and the merge is
  /// recomputed on the new tip. A merge, rebase… in progress in that work tree is an error
  /// (ErrorCode::conflict), never something to move the branch under.
  Result<MergeOutcome> merge(const std::string& source, const std::string& target,
                             const std::string& message = {}) const;

 private:
  Repository(std::filesystem::path root, std::filesystem::path git_dir)
      : root_(std::move(root)), git_dir_(std::move(git_dir)) {}

  std::filesystem::path root_;
  std::filesystem::path git_dir_;
};

}  // namespace loopr::git
