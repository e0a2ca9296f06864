// `diff HEAD` for prompts: what changed since the last checkpoint, capped to a prompt's budget.
#include <loopr/git/worktree.hpp>

#include "git/history.hpp"
#include "git/libgit2.hpp"
#include "git/text.hpp"

namespace loopr::git {

using namespace detail;

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

}  // namespace

Result<std::string> Worktree::diff(const DiffLimits& limits) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid head, head_id(repo.get()));
  LOOPR_ASSIGN(TreePtr tree, commit_tree(repo.get(), head));
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  // Untracked files as new files: an LLM's freshly written file belongs in "what I changed".
  opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
               GIT_DIFF_SHOW_UNTRACKED_CONTENT | GIT_DIFF_INCLUDE_TYPECHANGE;
  opts.notify_cb = skip_private_deltas;
  LOOPR_ASSIGN(DiffPtr diff,
               make<DiffPtr>("diffing " + path_.string() + " against HEAD",
                             git_diff_tree_to_workdir_with_index, repo.get(), tree.get(), &opts));
  // Renames as git shows them by default (diff.renames), so a moved file is not a full delete
  // plus a full add in the prompt.
  git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
  find.flags = GIT_DIFF_FIND_RENAMES;
  LOOPR_TRY(check(git_diff_find_similar(diff.get(), &find), "finding renames"));
  LineCapper capper(limits.max_lines, limits.max_bytes);
  LOOPR_TRY(check(git_diff_print(diff.get(), GIT_DIFF_FORMAT_PATCH, print_line, &capper),
                  "printing the diff"));
  return capper.finish();
}

}  // namespace loopr::git
