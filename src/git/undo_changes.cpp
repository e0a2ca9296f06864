// Undoing a work tree's changes but for a few paths: HEAD's version back for tracked files,
// new files removed (never following a symlink: the link itself goes).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <loopr/core/worktree_sweep.hpp>
#include <loopr/git/worktree.hpp>

#include "git/deadline.hpp"
#include "git/libgit2.hpp"

namespace loopr::git {

using namespace detail;

Result<std::vector<std::string>> Worktree::undo_changes_except(
    const std::set<std::string>& keep) const {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  // Before libgit2 reads the work tree: a FIFO `.gitignore` would block this thread for good.
  SweepReport swept = sweep_worktree(path_);
  if (!swept.failed.empty())
    return make_error(ErrorCode::io, "the worktree " + path_.string() +
                                         " holds files loopr cannot remove: " + describe(swept));
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
               GIT_STATUS_OPT_INCLUDE_IGNORED | GIT_STATUS_OPT_RECURSE_IGNORED_DIRS;
  LOOPR_ASSIGN(StatusListPtr list, make<StatusListPtr>("reading status of " + path_.string(),
                                                       git_status_list_new, repo.get(), &opts));
  std::vector<std::string> undone, from_head;
  std::size_t count = git_status_list_entrycount(list.get());
  for (std::size_t i = 0; i < count; ++i) {
    const git_status_entry* e = git_status_byindex(list.get(), i);
    unsigned s = e->status;
    if (s == GIT_STATUS_CURRENT) continue;
    const git_diff_delta* d = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
    std::string path = d->new_file.path ? d->new_file.path : d->old_file.path;
    if (keep.count(path) || is_loopr_private_path(path)) continue;
    bool in_head = !(s & (GIT_STATUS_WT_NEW | GIT_STATUS_IGNORED | GIT_STATUS_INDEX_NEW));
    if (in_head) {
      from_head.push_back(path);
    } else if (::unlink((path_ / path).c_str()) != 0 && errno != ENOENT) {
      return make_error(ErrorCode::io, "cannot remove " + path + ": " + std::strerror(errno));
    }
    undone.push_back(path);
  }
  if (!from_head.empty()) {
    std::vector<char*> paths;
    for (auto& p : from_head) paths.push_back(p.data());
    git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
    co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
    co.paths = {paths.data(), paths.size()};
    LOOPR_TRY(check(git_checkout_head(repo.get(), &co), "restoring files in " + path_.string()));
  }
  // A new file the tool staged (`git add`) leaves the index with the file.
  LOOPR_ASSIGN(IndexPtr index,
               make<IndexPtr>("opening the index", git_repository_index, repo.get()));
  bool index_changed = false;
  for (const auto& p : undone)
    if (git_index_get_bypath(index.get(), p.c_str(), 0) != nullptr &&
        std::find(from_head.begin(), from_head.end(), p) == from_head.end()) {
      git_index_remove_bypath(index.get(), p.c_str());
      index_changed = true;
    }
  if (index_changed) LOOPR_TRY(check(git_index_write(index.get()), "writing the index"));
  std::sort(undone.begin(), undone.end());
  return undone;
}

}  // namespace loopr::git
