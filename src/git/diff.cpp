// Diffs for prompts: what changed since the last checkpoint (`diff HEAD`), the loop's whole work
// since where it started (`diff_since`, `changes_since`), and what its last checkpoint changed;
// and a branch's whole change since it forked (the web UI's loop page). Every text is capped.
#include <sys/stat.h>

#include <loopr/core/repo_paths.hpp>
#include <loopr/core/worktree_sweep.hpp>
#include <loopr/git/repository.hpp>
#include <loopr/git/work_tree_state.hpp>
#include <loopr/git/worktree.hpp>

#include "git/deadline.hpp"
#include "git/history.hpp"
#include "git/libgit2.hpp"
#include "git/text.hpp"

namespace loopr::git {

using namespace detail;

namespace detail {

Result<git_oid> start_commit(git_repository* repo, const std::string& since, const git_oid& head) {
  if (since.empty()) return head;
  git_oid start{};
  if (since.size() == 40) {
    auto parsed = parse_oid(since);
    if (!parsed) return head;
    start = *parsed;
  } else {
    auto tip = branch_tip(repo, since);
    if (!tip) return head;
    start = *tip;
  }
  git_oid base{};
  if (kept_merge_base(&base, repo, head, start) != 0) return head;
  return base;
}

Result<ForkDiff> fork_diff(git_repository* repo, const git_oid& a, const git_oid& b,
                           const std::string& what, const git_diff_options& opts) {
  git_oid base{};
  int rc = kept_merge_base(&base, repo, a, b);
  if (rc == GIT_ENOTFOUND)
    base = a;  // unrelated histories: everything `b` has differs
  else
    LOOPR_TRY(check(rc, "finding the merge base of " + what));
  LOOPR_ASSIGN(TreePtr ta, commit_tree(repo, base));
  LOOPR_ASSIGN(TreePtr tb, commit_tree(repo, b));
  LOOPR_ASSIGN(DiffPtr diff, make<DiffPtr>("diffing " + what, git_diff_tree_to_tree, repo, ta.get(),
                                           tb.get(), &opts));
  return ForkDiff{std::move(ta), std::move(tb), std::move(diff)};
}

}  // namespace detail

namespace {

// git_diff_options.notify_cb: > 0 leaves a delta out (the same paths a checkpoint skips).
int skip_private_deltas(const git_diff* /*diff*/, const git_diff_delta* delta,
                        const char* /*matched_pathspec*/, void* /*payload*/) {
  const char* path = delta->new_file.path ? delta->new_file.path : delta->old_file.path;
  return path && is_loopr_private_path(path) ? 1 : 0;
}

int print_line(const git_diff_delta* /*delta*/, const git_diff_hunk* /*hunk*/,
               const git_diff_line* line, void* payload) {
  auto* capper = static_cast<LineCapper*>(payload);
  // Content lines come without their origin marker; headers carry their full text.
  if (line->origin == GIT_DIFF_LINE_CONTEXT || line->origin == GIT_DIFF_LINE_ADDITION ||
      line->origin == GIT_DIFF_LINE_DELETION) {
    char origin = line->origin;
    capper->add(std::string_view(&origin, 1));
  }
  capper->add(std::string_view(line->content, line->content_len));
  return 0;
}

// The work tree (index and untracked files included) against the tree of `from`.
Result<DiffPtr> diff_to_workdir(git_repository* repo, const git_oid& from,
                                const std::filesystem::path& path) {
  LOOPR_ASSIGN(TreePtr tree, commit_tree(repo, from));
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  // Untracked files as new files: an LLM's freshly written file belongs in "what I changed".
  opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
               GIT_DIFF_SHOW_UNTRACKED_CONTENT | GIT_DIFF_INCLUDE_TYPECHANGE;
  opts.notify_cb = skip_private_deltas;
  LOOPR_ASSIGN(DiffPtr diff,
               make<DiffPtr>("diffing " + path.string(), git_diff_tree_to_workdir_with_index, repo,
                             tree.get(), &opts));
  // Renames as git shows them by default (diff.renames), so a moved file is not a full delete
  // plus a full add in the prompt.
  git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
  find.flags = GIT_DIFF_FIND_RENAMES;
  LOOPR_TRY(check(git_diff_find_similar(diff.get(), &find), "finding renames"));
  count_work_tree_read();
  return diff;
}

// Whether the work tree is still what the checkpoint `clean_at` made it, so that a diff against
// it equals the diff against HEAD's tree: HEAD is still that commit, and nothing that a diff
// against the work tree shows beyond HEAD's tree can be there: no executor mount points (they
// stay untracked: kWorktreeMountsFile) and no gitlink (a nested repository's own edits show).
Result<bool> still_clean_at(git_repository* repo, const git_oid& head,
                            const std::string& clean_at) {
  if (clean_at.empty() || to_hex(head) != clean_at) return false;
  const char* admin = git_repository_path(repo);
  struct stat st {};
  if (!admin || ::stat((std::filesystem::path(admin) / kWorktreeMountsFile).c_str(), &st) == 0)
    return false;
  LOOPR_ASSIGN(IndexPtr index, make<IndexPtr>("opening the index", git_repository_index, repo));
  for (std::size_t i = 0, n = git_index_entrycount(index.get()); i < n; ++i)
    if (git_index_get_byindex(index.get(), i)->mode == GIT_FILEMODE_COMMIT) return false;
  return true;
}

// The same diff as diff_to_workdir from objects alone, for a work tree still_clean_at HEAD.
Result<DiffPtr> diff_to_head(git_repository* repo, const git_oid& from, const git_oid& head,
                             const std::filesystem::path& path) {
  LOOPR_ASSIGN(TreePtr tree, commit_tree(repo, from));
  LOOPR_ASSIGN(TreePtr head_tree, commit_tree(repo, head));
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
  opts.notify_cb = skip_private_deltas;
  LOOPR_ASSIGN(DiffPtr diff, make<DiffPtr>("diffing " + path.string(), git_diff_tree_to_tree, repo,
                                           tree.get(), head_tree.get(), &opts));
  git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
  find.flags = GIT_DIFF_FIND_RENAMES;
  LOOPR_TRY(check(git_diff_find_similar(diff.get(), &find), "finding renames"));
  return diff;
}

Result<std::string> print_patch(git_diff* diff, const DiffLimits& limits) {
  LineCapper capper(limits.max_lines, limits.max_bytes);
  LOOPR_TRY(
      check(git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, print_line, &capper), "printing the diff"));
  return capper.finish();
}

char status_letter(git_delta_t status) {
  switch (status) {
    case GIT_DELTA_ADDED:
    case GIT_DELTA_UNTRACKED:
      return 'A';
    case GIT_DELTA_DELETED:
      return 'D';
    case GIT_DELTA_RENAMED:
      return 'R';
    case GIT_DELTA_TYPECHANGE:
      return 'T';
    case GIT_DELTA_COPIED:
      return 'C';
    default:
      return 'M';
  }
}

// `X path` lines (`R old -> new` for a rename), at most `max_paths` and then a count of the rest.
std::vector<std::string> name_status(git_diff* diff, std::size_t max_paths) {
  std::vector<std::string> out;
  const std::size_t n = git_diff_num_deltas(diff);
  for (std::size_t i = 0; i < n; ++i) {
    if (out.size() == max_paths) {
      out.push_back("… " + std::to_string(n - i) + " more");
      break;
    }
    const git_diff_delta* d = git_diff_get_delta(diff, i);
    std::string line(1, status_letter(d->status));
    line += ' ';
    if (d->status == GIT_DELTA_RENAMED && d->old_file.path)
      line += quote_path(d->old_file.path) + " -> ";
    line += quote_path(d->new_file.path ? d->new_file.path : d->old_file.path);
    out.push_back(std::move(line));
  }
  return out;
}

// What HEAD's commit changed against its first parent (nothing for a root commit's parent).
Result<std::vector<std::string>> head_commit_changes(git_repository* repo, const git_oid& head,
                                                     const std::filesystem::path& path,
                                                     std::size_t max_paths) {
  LOOPR_ASSIGN(CommitPtr commit, lookup_commit(repo, head));
  LOOPR_ASSIGN(TreePtr tree, commit_tree(repo, head));
  TreePtr parent_tree;
  if (git_commit_parentcount(commit.get()) > 0) {
    LOOPR_ASSIGN(parent_tree, commit_tree(repo, *git_commit_parent_id(commit.get(), 0)));
  }
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.notify_cb = skip_private_deltas;
  LOOPR_ASSIGN(DiffPtr diff,
               make<DiffPtr>("diffing the last commit of " + path.string(), git_diff_tree_to_tree,
                             repo, parent_tree.get(), tree.get(), &opts));
  git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
  find.flags = GIT_DIFF_FIND_RENAMES;
  LOOPR_TRY(check(git_diff_find_similar(diff.get(), &find), "finding renames"));
  return name_status(diff.get(), max_paths);
}

// The work tree at `path` against `since` (a commit; empty: HEAD), handed to `read` while the
// repository is open.
template <typename T, typename Read>
Result<T> read_workdir_diff(const std::filesystem::path& path, const std::string& since,
                            Read read) {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path, OpenMode::exact));
  LOOPR_ASSIGN(git_oid head, head_id(repo.get()));
  LOOPR_ASSIGN(git_oid start, start_commit(repo.get(), since, head));
  LOOPR_ASSIGN(DiffPtr diff, diff_to_workdir(repo.get(), start, path));
  return read(diff.get());
}

}  // namespace

Result<std::string> Worktree::diff(const DiffLimits& limits) const {
  return diff_since("", limits);
}

Result<std::string> Worktree::diff_since(const std::string& since, const DiffLimits& limits) const {
  return read_workdir_diff<std::string>(path_, since,
                                        [&](git_diff* diff) { return print_patch(diff, limits); });
}

Result<std::vector<std::string>> Worktree::changes_since(const std::string& since,
                                                         std::size_t max_paths) const {
  return read_workdir_diff<std::vector<std::string>>(
      path_, since, [&](git_diff* diff) { return name_status(diff, max_paths); });
}

Result<std::vector<std::string>> Worktree::last_commit_changes(std::size_t max_paths) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid head, head_id(repo.get()));
  return head_commit_changes(repo.get(), head, path_, max_paths);
}

Result<WorkState> Worktree::read_work_state(const std::filesystem::path& path,
                                            const WorkStateOptions& options) {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path, OpenMode::exact));
  if (git_repository_is_bare(repo.get()))
    return make_error(ErrorCode::invalid_argument, path.string() + " is a bare repository");
  LOOPR_ASSIGN(git_oid head, head_id(repo.get()));
  LOOPR_ASSIGN(git_oid start, start_commit(repo.get(), options.since, head));
  WorkState out;
  LOOPR_ASSIGN(bool clean, still_clean_at(repo.get(), head, options.clean_at));
  if (!clean) {
    // Nothing special may be left where libgit2 reads (a FIFO `.gitignore` blocks this thread
    // for good); the sweep after each command took it away unless it could not.
    SweepReport swept = sweep_worktree(path);
    if (!swept.failed.empty())
      return make_error(ErrorCode::io,
                        "it holds files loopr does not read and cannot remove: " + describe(swept));
  }
  DiffPtr diff;
  if (clean) {
    LOOPR_ASSIGN(diff, diff_to_head(repo.get(), start, head, path));
  } else {
    LOOPR_ASSIGN(diff, diff_to_workdir(repo.get(), start, path));
  }
  out.changes = name_status(diff.get(), options.max_paths);
  LOOPR_ASSIGN(out.diff, print_patch(diff.get(), options.limits));
  if (options.max_last_paths > 0) {
    LOOPR_ASSIGN(out.last_changes,
                 head_commit_changes(repo.get(), head, path, options.max_last_paths));
  }
  if (options.log_entries > 0) {
    LOOPR_ASSIGN(out.log, oneline_log(repo.get(), head, options.log_entries));
  }
  return out;
}

Result<std::string> Repository::diff_since_fork(const std::string& from, const std::string& to,
                                                const DiffLimits& limits) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  auto commit_of = [&](const std::string& rev) -> Result<git_oid> {
    if (rev.size() == 40)
      if (auto sha = parse_oid(rev)) return *sha;
    auto tip = branch_tip(repo.get(), rev);
    if (!tip) return make_error(ErrorCode::not_found, "no branch " + rev);
    return *tip;
  };
  LOOPR_ASSIGN(git_oid a, commit_of(from));
  LOOPR_ASSIGN(git_oid b, commit_of(to));
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.notify_cb = skip_private_deltas;
  LOOPR_ASSIGN(ForkDiff fork, fork_diff(repo.get(), a, b, from + " and " + to, opts));
  git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
  find.flags = GIT_DIFF_FIND_RENAMES;
  LOOPR_TRY(check(git_diff_find_similar(fork.diff.get(), &find), "finding renames"));
  return print_patch(fork.diff.get(), limits);
}

}  // namespace loopr::git
