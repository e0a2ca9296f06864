// One work tree (a loop's `.loopr/worktrees/<id>`, or the main one): checkpoint commits, the
// state shown in prompts (status, diff, log, head), and rebasing its branch. Blocking calls.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <loopr/core/protected_paths.hpp>
#include <loopr/core/result.hpp>
#include <loopr/git/types.hpp>

namespace loopr::git {

/// What an iteration's prompt shows of a loop's work (`Worktree::read_work_state`).
struct WorkState {
  std::vector<std::string> changes;       ///< `X path` lines of the work since `since`
  std::vector<std::string> last_changes;  ///< what HEAD's commit changed (the last checkpoint)
  std::string diff;                       ///< the work since `since` as a unified diff, capped
  std::vector<std::string> log;           ///< `<short sha> <subject>`, newest first
};

struct WorkStateOptions {
  std::string since;  ///< a full sha or a branch name; empty: HEAD (what is uncommitted)
  /// The sha of a checkpoint after which nothing wrote the work tree (the caller ran no command
  /// and no tool there since it made that commit). While HEAD is still that commit, the work
  /// tree and the index are HEAD's tree, so the state comes from objects alone: the work tree
  /// is neither swept nor read. Empty, or HEAD elsewhere: the work tree is swept and read.
  std::string clean_at;
  DiffLimits limits;
  std::size_t max_paths = 200;
  std::size_t max_last_paths = 20;  ///< 0: `last_changes` left empty
  int log_entries = 10;
};

/// A handle on a work tree folder: just its path, so it is cheap to copy and safe to use from
/// any thread (each call takes a libgit2 repository of its own, see repository.hpp).
class Worktree {
 public:
  /// The work tree whose top folder is exactly `path` (no search upwards, so a typo can never
  /// end up committing in the user's main work tree). not_found if `path` is not one.
  static Result<Worktree> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }

  /// Commits everything changed in the work tree (new, modified, deleted files; `.gitignore`
  /// honoured; loopr's private `.loopr/state|run|worktrees|archive|logs/` never) on its branch,
  /// author and committer from git config or `loopr <loopr@localhost>`. No empty commits: when
  /// nothing differs from HEAD the outcome is `nothing_to_commit`. First the work tree is swept
  /// (core/worktree_sweep.hpp: FIFOs, sockets and devices removed, setuid/setgid bits cleared;
  /// an io error naming what could not be): a loop's worktree holds what the model left.
  Result<CommitOutcome> checkpoint(const std::string& message) const;

  /// `open(path)` then `checkpoint(message)` on one repository open (an iteration's checkpoint).
  /// `after_command`: the caller knows nothing ran or wrote in the worktree since the executor's
  /// last command there ended; the listing its sweep handed over, if any
  /// (core/sweep_handoff.hpp), then stands for the checkpoint's own sweep (one walk, not two).
  static Result<CommitOutcome> checkpoint_at(const std::filesystem::path& path,
                                             const std::string& message,
                                             bool after_command = false);

  /// The same checkpoint from what the caller knows was written: HEAD must still be `clean_at`
  /// (a checkpoint after which only loopr's own file tools wrote, see WorkStateOptions), and
  /// `written` (work-tree-relative, `/`-separated) names every path they wrote. Only those paths
  /// are looked at: staged as `git add -A` would (ignored new files and loopr's private folders
  /// skipped), no sweep (the tools write regular files only). HEAD elsewhere: the full checkpoint.
  static Result<CommitOutcome> checkpoint_written(const std::filesystem::path& path,
                                                  const std::string& message,
                                                  const std::string& clean_at,
                                                  const std::vector<std::string>& written);

  /// Undoes every change since HEAD except those to `keep` (repo-relative paths): changed and
  /// deleted tracked files come back from HEAD, new files (ignored ones too, but never loopr's
  /// private folders) are removed. The paths it undid, sorted. For a loop that may write only
  /// its artifact but ran a tool that writes anywhere (the claude CLI).
  Result<std::vector<std::string>> undo_changes_except(const std::set<std::string>& keep) const;

  /// `git status --porcelain` (v1) text: `XY path` lines, tracked changes then `??` untracked,
  /// paths quoted the way git quotes them. Empty when clean.
  Result<std::string> status() const;

  /// Unified diff of the work tree against HEAD, untracked (not ignored) files included as new
  /// files: what the next checkpoint would commit. Longer text is cut at `limits` and ends with a
  /// line `… N more lines`.
  Result<std::string> diff(const DiffLimits& limits = {}) const;

  /// The loop's whole work: the work tree (index and untracked files included) against where it
  /// started, `since` (a full sha or a branch name) met with HEAD at their merge base, so only
  /// this branch's own commits and edits show. Empty `since`: the same as `diff`.
  Result<std::string> diff_since(const std::string& since, const DiffLimits& limits = {}) const;

  /// The same change as `X path` lines (A, M, D, R `old -> new`, T), git's order; past
  /// `max_paths` one line `… N more`. Empty when nothing changed.
  Result<std::vector<std::string>> changes_since(const std::string& since,
                                                 std::size_t max_paths = 200) const;

  /// The same change as typed records for the protection rule (core/protected_paths.hpp), with
  /// renames found and mode changes told apart; files git ignores that the loop made count as
  /// added (an ignored `conftest.py` still runs). Changed files matching `content_patterns`
  /// carry their content before and after (at most 1 MiB each; symlinks are not followed, a
  /// special file reads as empty).
  Result<std::vector<PathChange>> path_changes_since(
      const std::string& since, const std::vector<std::string>& content_patterns = {}) const;

  /// `changes_since`, `diff_since` (from one diff), `last_commit_changes` and `log` of the work
  /// tree at exactly `path`, from one repository open: an iteration's whole prompt state. The
  /// work tree is swept first (core/worktree_sweep.hpp; an io error names what could not be
  /// removed) unless `options.clean_at` spares reading it.
  static Result<WorkState> read_work_state(const std::filesystem::path& path,
                                           const WorkStateOptions& options);

  /// What HEAD's commit (the last checkpoint) changed against its first parent, as `X path` lines.
  Result<std::vector<std::string>> last_commit_changes(std::size_t max_paths = 50) const;

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

  /// Whether the tip of branch `onto` changed, since commit `since` (a full sha: where this
  /// branch's work started), a path that HEAD changed since `since` (or a folder above one).
  /// True when it cannot tell (`since` unknown or gone). Reads objects only: the cost follows
  /// the paths this branch changed, not how much `onto` moved.
  Result<bool> work_meets_changes(const std::string& since, const std::string& onto) const;

 private:
  explicit Worktree(std::filesystem::path path) : path_(std::move(path)) {}
  friend class Repository;

  std::filesystem::path path_;
};

}  // namespace loopr::git
