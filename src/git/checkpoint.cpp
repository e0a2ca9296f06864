// Checkpoint commits: everything changed in a work tree becomes one commit on its branch.
#include <sys/stat.h>

#include <loopr/core/clean_checkpoint.hpp>
#include <loopr/core/sweep_handoff.hpp>
#include <loopr/git/worktree.hpp>

#include "git/deadline.hpp"
#include "git/history.hpp"
#include "git/libgit2.hpp"
#include "git/stage.hpp"

namespace loopr::git {

using namespace detail;

namespace {

// The message as `git commit` would store it: trailing whitespace trimmed, one final newline.
// '#' lines are kept (an LLM's Markdown headings are content, not comments).
Result<std::string> clean_message(const std::string& message) {
  Buf out;
  LOOPR_TRY(check(git_message_prettify(&out.buf, message.c_str(), /*strip_comments=*/0, '#'),
                  "cleaning the commit message"));
  if (out.str().empty()) {
    return make_error(ErrorCode::invalid_argument, "a checkpoint needs a non-empty message");
  }
  return out.str();
}

// Commits the staged index on HEAD's branch (the body of every checkpoint; `path` names the work
// tree in messages).
Result<CommitOutcome> commit_index(git_repository* repo, const StagedIndex& staged,
                                   const std::filesystem::path& path, const std::string& text) {
  git_index* index = staged.index.get();
  git_oid tree_id;
  LOOPR_TRY(check(git_index_write_tree(&tree_id, index), "writing the tree"));
  // Written even when nothing is committed, so the index's refreshed stat data is kept and the
  // CLI's `git status` sees the same (clean) state. After the tree: the index file then keeps
  // the trees just written (its cache-tree extension), and the next checkpoint rebuilds only
  // the folders something changed in. Not when staging changed nothing: the file already says
  // all of it, and writing it again costs a new file (index.lock, renamed) per iteration.
  if (staged.changed) LOOPR_TRY(check(git_index_write(index), "writing the index"));

  LOOPR_ASSIGN(git_oid parent_id, head_id(repo));
  LOOPR_ASSIGN(CommitPtr parent, lookup_commit(repo, parent_id));
  if (git_oid_equal(git_commit_tree_id(parent.get()), &tree_id)) {
    return CommitOutcome{CommitOutcome::Kind::nothing_to_commit, to_hex(parent_id)};
  }

  LOOPR_ASSIGN(TreePtr tree,
               make<TreePtr>("reading the new tree", git_tree_lookup, repo, &tree_id));
  LOOPR_ASSIGN(SignaturePtr sig, default_signature(repo));
  const git_commit* parents[] = {parent.get()};
  git_oid id;
  // update_ref "HEAD" moves the checked-out branch only if its tip is still `parent` (libgit2
  // checks), so a concurrent commit on the same branch fails instead of being overwritten.
  LOOPR_TRY(check(git_commit_create(&id, repo, "HEAD", sig.get(), sig.get(), nullptr, text.c_str(),
                                    tree.get(), 1, parents),
                  "committing in " + path.string()));
  return CommitOutcome{CommitOutcome::Kind::committed, to_hex(id)};
}

// Stages everything (like `git add -A`) and commits it on HEAD's branch. A listing handed over
// for this worktree is taken either way: used only `after_command`, never left for later.
Result<CommitOutcome> commit_all(git_repository* repo, const std::filesystem::path& path,
                                 const std::string& message, bool after_command = false) {
  std::optional<SweptListing> handed = take_handed_sweep(path);
  drop_clean_checkpoint(path);  // this checkpoint replaces it
  if (!after_command) handed.reset();
  LOOPR_ASSIGN(std::string text, clean_message(message));
  LOOPR_ASSIGN(StagedIndex staged, stage_all(repo, path, handed ? &*handed : nullptr));
  LOOPR_ASSIGN(CommitOutcome made, commit_index(repo, staged, path, text));
  // Staged from a complete sweep after the command, with nothing run since: the work tree is now
  // this commit's tree plus what git does not track (core/sweep_handoff.hpp's CleanCheckpoint).
  struct stat index_st {};
  const char* index_file = git_index_path(staged.index.get());
  if (staged.untracked && index_file != nullptr && ::stat(index_file, &index_st) == 0)
    keep_clean_checkpoint(path, CleanCheckpoint{made.sha, index_st, std::move(*staged.untracked)});
  return made;
}

}  // namespace

Result<CommitOutcome> Worktree::checkpoint(const std::string& message) const {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  return commit_all(repo.get(), path_, message);
}

Result<CommitOutcome> Worktree::checkpoint_at(const std::filesystem::path& path,
                                              const std::string& message, bool after_command) {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path, OpenMode::exact));
  if (git_repository_is_bare(repo.get()))
    return make_error(ErrorCode::invalid_argument, path.string() + " is a bare repository");
  return commit_all(repo.get(), path, message, after_command);
}

}  // namespace loopr::git

namespace loopr::git {

Result<CommitOutcome> Worktree::checkpoint_written(const std::filesystem::path& path,
                                                   const std::string& message,
                                                   const std::string& clean_at,
                                                   const std::vector<std::string>& written) {
  WorkDeadline deadline;    // git reads the work tree (git/deadline.hpp)
  drop_handed_sweep(path);  // kept for a checkpoint after a command, which this is not
  drop_clean_checkpoint(path);
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path, OpenMode::exact));
  if (git_repository_is_bare(repo.get()))
    return make_error(ErrorCode::invalid_argument, path.string() + " is a bare repository");
  LOOPR_ASSIGN(git_oid head, head_id(repo.get()));
  if (clean_at.empty() || to_hex(head) != clean_at) return commit_all(repo.get(), path, message);
  LOOPR_ASSIGN(std::string text, clean_message(message));
  LOOPR_ASSIGN(StagedIndex staged, stage_written(repo.get(), path, written));
  return commit_index(repo.get(), staged, path, text);
}

}  // namespace loopr::git
