// Values the git module returns: what a checkpoint, rebase or merge did, and what a worktree is.
// Outcomes a caller must branch on (conflict, nothing to commit) are values here, not errors.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace loopr::git {

/// Who a commit is by (from git config, else `loopr <loopr@localhost>`).
struct Identity {
  std::string name;
  std::string email;
};

/// What a checkpoint commit did.
struct CommitOutcome {
  enum class Kind {
    committed,          ///< a new commit; `sha` is it
    nothing_to_commit,  ///< the work tree matched HEAD; no commit was made, `sha` is HEAD
  };
  Kind kind = Kind::nothing_to_commit;
  std::string sha;
};

/// How `Worktree::diff` caps its text for a prompt.
struct DiffLimits {
  std::size_t max_lines = 400;
  std::size_t max_bytes = 64 * 1024;
};

/// A linked worktree as git records it (`git worktree list`).
struct WorktreeInfo {
  std::string name;    ///< `.git/worktrees/<name>`; loopr uses the loop id
  std::string path;    ///< the work tree folder
  std::string branch;  ///< checked-out branch (short name), empty when HEAD is detached
  std::string sha;     ///< HEAD commit
  bool valid = true;   ///< false when the folder is gone (`git worktree prune` would drop it)
  bool locked = false;
};

/// What archiving a loop's worktree did.
struct ArchiveOutcome {
  std::string branch;  ///< where the loop's commits live now: `loopr/archive/<loop-id>`
  std::string sha;     ///< that branch's tip
  bool committed_leftovers = false;  ///< uncommitted work was checkpointed before removal
};

/// Whether `remove_worktree` may throw away uncommitted work.
enum class RemoveMode {
  refuse_if_dirty,  ///< ErrorCode::conflict when the work tree has changes git would show
  force,            ///< delete whatever is there (also a locked worktree)
};

/// What a rebase of a loop branch onto another branch did. Only `rebased` and `fast_forward`
/// change anything; every other kind leaves branch, index and files exactly as they were.
struct RebaseOutcome {
  enum class Kind {
    rebased,        ///< the branch's own commits were replayed onto the new base
    fast_forward,   ///< the branch had no commits of its own; it now points at the base tip
    up_to_date,     ///< the base tip is already in the branch
    conflict,       ///< replaying a commit conflicts; `conflicts` lists the paths
    local_changes,  ///< uncommitted edits in the worktree would be overwritten; `conflicts`
                    ///< lists them (checkpoint first)
  };
  Kind kind = Kind::up_to_date;
  std::vector<std::string> conflicts;
  std::string sha;         ///< the branch tip after the call
  std::string stopped_at;  ///< conflict: the commit whose replay conflicted
};

/// What merging a branch into another did. Only `fast_forward` and `merged` change anything.
struct MergeOutcome {
  enum class Kind {
    fast_forward,   ///< the target had nothing of its own; it now points at the source tip
    merged,         ///< a merge commit with parents (target, source)
    up_to_date,     ///< the source is already in the target
    conflict,       ///< the two sides conflict; `conflicts` lists the paths
    local_changes,  ///< the target is checked out in a work tree whose uncommitted edits the
                    ///< merge would overwrite; `conflicts` lists them
  };
  Kind kind = Kind::up_to_date;
  std::vector<std::string> conflicts;
  std::string sha;  ///< the target tip after the call
};

const char* to_string(CommitOutcome::Kind kind);
const char* to_string(RebaseOutcome::Kind kind);
const char* to_string(MergeOutcome::Kind kind);

}  // namespace loopr::git
