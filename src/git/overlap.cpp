// Whether the integration branch's changes since a loop's start touch what the loop changed: the
// rebase gate rebases a loop at its boundary only then (issue 32). Reads objects only: three
// trees and one tree diff of the loop's own (small) change; the paths the integration branch
// changed are looked up one by one, so the cost does not grow with how much landed meanwhile.
#include <loopr/git/worktree.hpp>

#include "git/history.hpp"
#include "git/libgit2.hpp"

namespace loopr::git {

using namespace detail;

namespace {

// The entry at `path` in `tree`: kind and id, or nothing (absent, or a parent is not a folder).
struct Entry {
  bool present = false;
  git_oid id{};
  git_filemode_t mode = GIT_FILEMODE_UNREADABLE;
  bool operator==(const Entry& o) const {
    return present == o.present && (!present || (mode == o.mode && git_oid_equal(&id, &o.id)));
  }
};

Entry entry_at(git_tree* tree, const std::string& path) {
  git_tree_entry* raw = nullptr;
  if (git_tree_entry_bypath(&raw, tree, path.c_str()) != 0) return {};
  TreeEntryPtr e(raw);
  return Entry{true, *git_tree_entry_id(e.get()), git_tree_entry_filemode(e.get())};
}

// True when `path` differs between `from` and `to`, or one of its parent folders became
// something else than a folder in `to` (a file or link where the loop writes into a folder). A
// parent folder that `to` merely created or removed does not count: the loop's own path is
// absent on both sides then, or its difference is seen at the path itself.
bool differs(git_tree* from, git_tree* to, const std::string& path) {
  if (!(entry_at(from, path) == entry_at(to, path))) return true;
  for (auto slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    Entry b = entry_at(to, path.substr(0, slash));
    if (b.present && b.mode != GIT_FILEMODE_TREE) return true;
  }
  return false;
}

int collect_path(const git_diff_delta* delta, float /*progress*/, void* payload) {
  auto* paths = static_cast<std::vector<std::string>*>(payload);
  if (delta->old_file.path) paths->emplace_back(delta->old_file.path);
  if (delta->new_file.path &&
      (!delta->old_file.path || std::string_view(delta->new_file.path) != delta->old_file.path))
    paths->emplace_back(delta->new_file.path);
  return 0;
}

}  // namespace

Result<bool> Worktree::work_meets_changes(const std::string& since, const std::string& onto) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid head, head_id(repo.get()));
  LOOPR_ASSIGN(git_oid tip, branch_tip(repo.get(), onto));
  auto start = parse_oid(since);
  if (!start) return true;  // no known start: cannot tell, so it meets them
  if (git_oid_equal(&*start, &tip)) return false;
  auto base_tree = commit_tree(repo.get(), *start);
  if (!base_tree) return true;  // the start is gone (history rewritten by hand)
  LOOPR_ASSIGN(TreePtr mine, commit_tree(repo.get(), head));
  LOOPR_ASSIGN(TreePtr theirs, commit_tree(repo.get(), tip));
  // What the loop changed since its start (no rename detection: both paths of a move count).
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
  LOOPR_ASSIGN(DiffPtr diff, make<DiffPtr>("diffing " + path_.string(), git_diff_tree_to_tree,
                                           repo.get(), base_tree->get(), mine.get(), &opts));
  std::vector<std::string> paths;
  LOOPR_TRY(check(git_diff_foreach(diff.get(), collect_path, nullptr, nullptr, nullptr, &paths),
                  "listing the loop's changes"));
  for (const auto& p : paths)
    if (differs(base_tree->get(), theirs.get(), p)) return true;
  return false;
}

}  // namespace loopr::git
