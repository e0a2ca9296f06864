// Checkpoint commits: everything changed in a work tree becomes one commit on its branch.
#include <fstream>

#include <loopr/core/repo_paths.hpp>
#include <loopr/core/worktree_sweep.hpp>
#include <loopr/git/work_tree_state.hpp>
#include <loopr/git/worktree.hpp>

#include "git/deadline.hpp"
#include "git/history.hpp"
#include "git/libgit2.hpp"

namespace loopr::git {

using namespace detail;

namespace {

// git_index_add_all callback: 0 stages the path, > 0 skips it.
int skip_private_paths(const char* path, const char* /*matched_pathspec*/, void* /*payload*/) {
  return is_loopr_private_path(path) ? 1 : 0;
}

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

// The checkout's paths the executor shows in this worktree (kWorktreeMountsFile in its git admin
// folder): their mount points (an empty folder or file) or links are never committed. As ignore
// rules of this repository handle only, so they hold for untracked paths and nothing else.
Result<void> ignore_checkout_mounts(git_repository* repo) {
  const char* admin = git_repository_path(repo);
  if (!admin) return ok();
  std::ifstream in(std::filesystem::path(admin) / kWorktreeMountsFile);
  std::string rules;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rules += "/" + line + "\n";
  if (rules.empty()) return ok();
  return check(git_ignore_add_rule(repo, rules.c_str()), "reading the worktree's mounted paths");
}

// Stages everything (like `git add -A`): the index a checkpoint commits.
Result<IndexPtr> stage_all(git_repository* repo, const std::filesystem::path& path) {
  // Before libgit2 opens anything there: a FIFO (say, `.gitignore`) would block this thread
  // for good, and a setuid bit must not stay on the host (core/worktree_sweep.hpp).
  SweepReport swept = sweep_worktree(workdir_of(repo));
  if (!swept.failed.empty())
    return make_error(ErrorCode::io, "the worktree " + path.string() +
                                         " holds files loopr does not commit and cannot remove: " +
                                         describe(swept));
  LOOPR_TRY(ignore_checkout_mounts(repo));
  LOOPR_ASSIGN(IndexPtr index, make<IndexPtr>("opening the index", git_repository_index, repo));
  // Like `git add -A`: new and modified files are staged, deleted ones removed, ignored skipped.
  LOOPR_TRY(check(
      git_index_add_all(index.get(), nullptr, GIT_INDEX_ADD_DEFAULT, skip_private_paths, nullptr),
      "staging changes in " + path.string()));
  count_work_tree_read();
  return index;
}

// The same index from the paths loopr's file tools wrote since the checkpoint HEAD is (nothing
// else wrote there): each is staged, or removed, as `git add -A` would; the rest is HEAD's tree
// already. The tools write regular files only, so there is nothing to sweep.
Result<IndexPtr> stage_written(git_repository* repo, const std::filesystem::path& path,
                               const std::vector<std::string>& written) {
  LOOPR_TRY(ignore_checkout_mounts(repo));
  LOOPR_ASSIGN(IndexPtr index, make<IndexPtr>("opening the index", git_repository_index, repo));
  const std::filesystem::path workdir = workdir_of(repo);
  for (const std::string& rel : written) {
    if (rel.empty() || is_loopr_private_path(rel)) continue;
    std::error_code ec;
    const auto st = std::filesystem::symlink_status(workdir / rel, ec);
    const bool tracked = git_index_get_bypath(index.get(), rel.c_str(), 0) != nullptr;
    if (!std::filesystem::exists(st)) {
      if (tracked)
        LOOPR_TRY(check(git_index_remove_bypath(index.get(), rel.c_str()),
                        "unstaging " + rel + " in " + path.string()));
      continue;
    }
    if (!tracked) {
      int ignored = 0;
      LOOPR_TRY(check(git_ignore_path_is_ignored(&ignored, repo, rel.c_str()),
                      "asking git whether " + rel + " is ignored"));
      if (ignored) continue;
    }
    LOOPR_TRY(check(git_index_add_bypath(index.get(), rel.c_str()),
                    "staging " + rel + " in " + path.string()));
  }
  return index;
}

// Commits `index` on HEAD's branch (the body of every checkpoint; `path` names the work tree in
// messages).
Result<CommitOutcome> commit_index(git_repository* repo, git_index* index,
                                   const std::filesystem::path& path, const std::string& text) {
  // Written even when nothing is committed, so the index's refreshed stat data is kept and the
  // CLI's `git status` sees the same (clean) state.
  LOOPR_TRY(check(git_index_write(index), "writing the index"));
  git_oid tree_id;
  LOOPR_TRY(check(git_index_write_tree(&tree_id, index), "writing the tree"));

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

// Stages everything (like `git add -A`) and commits it on HEAD's branch.
Result<CommitOutcome> commit_all(git_repository* repo, const std::filesystem::path& path,
                                 const std::string& message) {
  LOOPR_ASSIGN(std::string text, clean_message(message));
  LOOPR_ASSIGN(IndexPtr index, stage_all(repo, path));
  return commit_index(repo, index.get(), path, text);
}

}  // namespace

Result<CommitOutcome> Worktree::checkpoint(const std::string& message) const {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  return commit_all(repo.get(), path_, message);
}

Result<CommitOutcome> Worktree::checkpoint_at(const std::filesystem::path& path,
                                              const std::string& message) {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path, OpenMode::exact));
  if (git_repository_is_bare(repo.get()))
    return make_error(ErrorCode::invalid_argument, path.string() + " is a bare repository");
  return commit_all(repo.get(), path, message);
}

}  // namespace loopr::git

namespace loopr::git {

Result<CommitOutcome> Worktree::checkpoint_written(const std::filesystem::path& path,
                                                   const std::string& message,
                                                   const std::string& clean_at,
                                                   const std::vector<std::string>& written) {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path, OpenMode::exact));
  if (git_repository_is_bare(repo.get()))
    return make_error(ErrorCode::invalid_argument, path.string() + " is a bare repository");
  LOOPR_ASSIGN(git_oid head, head_id(repo.get()));
  if (clean_at.empty() || to_hex(head) != clean_at) return commit_all(repo.get(), path, message);
  LOOPR_ASSIGN(std::string text, clean_message(message));
  LOOPR_ASSIGN(IndexPtr index, stage_written(repo.get(), path, written));
  return commit_index(repo.get(), index.get(), path, text);
}

}  // namespace loopr::git
