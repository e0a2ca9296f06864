// `git status --porcelain` (v1) from libgit2's status list, for prompts and for dirty checks.
#include <algorithm>

#include <loopr/git/work_tree_state.hpp>
#include <loopr/git/worktree.hpp>

#include "git/deadline.hpp"
#include "git/libgit2.hpp"
#include "git/text.hpp"

namespace loopr::git {

using namespace detail;

namespace {

struct Line {
  std::string sort_key;  // the (new) path: git sorts its change list by it
  std::string text;
};

char index_code(unsigned s) {
  if (s & GIT_STATUS_INDEX_NEW) return 'A';
  if (s & GIT_STATUS_INDEX_MODIFIED) return 'M';
  if (s & GIT_STATUS_INDEX_DELETED) return 'D';
  if (s & GIT_STATUS_INDEX_RENAMED) return 'R';
  if (s & GIT_STATUS_INDEX_TYPECHANGE) return 'T';
  return ' ';
}

char workdir_code(unsigned s) {
  if (s & GIT_STATUS_WT_MODIFIED) return 'M';
  if (s & GIT_STATUS_WT_DELETED) return 'D';
  if (s & GIT_STATUS_WT_TYPECHANGE) return 'T';
  if (s & GIT_STATUS_WT_RENAMED) return 'R';
  return ' ';
}

// git's two letters for an unmerged path, from which stages the index holds.
Result<std::string> conflict_code(git_index* index, const char* path) {
  const git_index_entry* ancestor = nullptr;
  const git_index_entry* ours = nullptr;
  const git_index_entry* theirs = nullptr;
  LOOPR_TRY(check(git_index_conflict_get(&ancestor, &ours, &theirs, index, path),
                  std::string("reading the conflict on ") + path));
  if (ancestor && ours && theirs) return std::string("UU");
  if (!ancestor && ours && theirs) return std::string("AA");
  if (ancestor && ours) return std::string("UD");
  if (ancestor && theirs) return std::string("DU");
  if (ours) return std::string("AU");
  if (theirs) return std::string("UA");
  return std::string("DD");
}

Result<bool> quote_non_ascii(git_repository* repo) {
  LOOPR_ASSIGN(ConfigPtr config,
               make<ConfigPtr>("reading git config", git_repository_config, repo));
  int value = 1;
  int rc = git_config_get_bool(&value, config.get(), "core.quotepath");
  if (rc == GIT_ENOTFOUND) return true;
  LOOPR_TRY(check(rc, "reading core.quotePath"));
  return value != 0;
}

}  // namespace

Result<std::string> Worktree::status() const {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(bool quote_all, quote_non_ascii(repo.get()));
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  // Untracked folders are shown as `dir/` (no recursion), renames only between HEAD and the
  // index: git's defaults for `status --porcelain`.
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RENAMES_HEAD_TO_INDEX |
               GIT_STATUS_OPT_SORT_CASE_SENSITIVELY;
  LOOPR_ASSIGN(StatusListPtr list, make<StatusListPtr>("reading status of " + path_.string(),
                                                       git_status_list_new, repo.get(), &opts));
  count_work_tree_read();
  IndexPtr index;  // opened on the first conflict only

  std::vector<Line> tracked;
  std::vector<Line> untracked;
  auto q = [&](const char* p) { return quote_path(p, quote_all); };
  std::size_t count = git_status_list_entrycount(list.get());
  for (std::size_t i = 0; i < count; ++i) {
    const git_status_entry* e = git_status_byindex(list.get(), i);
    unsigned s = e->status;
    if (s == GIT_STATUS_CURRENT || (s & GIT_STATUS_IGNORED)) continue;
    const git_diff_delta* d = e->head_to_index ? e->head_to_index : e->index_to_workdir;
    const char* path = d->new_file.path ? d->new_file.path : d->old_file.path;
    if (s & GIT_STATUS_CONFLICTED) {
      if (!index) {
        LOOPR_ASSIGN(index, make<IndexPtr>("opening the index", git_repository_index, repo.get()));
      }
      LOOPR_ASSIGN(std::string xy, conflict_code(index.get(), path));
      tracked.push_back({path, xy + " " + q(path)});
      continue;
    }
    bool untracked_file = (s & GIT_STATUS_WT_NEW) != 0;
    unsigned rest = s & ~static_cast<unsigned>(GIT_STATUS_WT_NEW);
    if (rest != 0) {
      std::string xy{index_code(rest), workdir_code(rest)};
      if ((rest & GIT_STATUS_INDEX_RENAMED) && e->head_to_index) {
        tracked.push_back({path, xy + " " + q(e->head_to_index->old_file.path) + " -> " + q(path)});
      } else {
        tracked.push_back({path, xy + " " + q(path)});
      }
    }
    // A path deleted from the index but present on disk is both `D ` and `??`, as in git.
    if (untracked_file) untracked.push_back({path, "?? " + q(path)});
  }
  auto by_path = [](const Line& a, const Line& b) { return a.sort_key < b.sort_key; };
  std::stable_sort(tracked.begin(), tracked.end(), by_path);
  std::stable_sort(untracked.begin(), untracked.end(), by_path);
  std::string out;
  for (const auto* lines : {&tracked, &untracked}) {
    for (const Line& l : *lines) out += l.text + "\n";
  }
  return out;
}

}  // namespace loopr::git
