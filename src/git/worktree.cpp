// A work tree handle: opening it exactly, HEAD and history (what prompts show of the past).
#include <loopr/git/worktree.hpp>

#include "git/history.hpp"
#include "git/libgit2.hpp"

namespace loopr::git {

using namespace detail;

namespace detail {

Result<git_oid> head_id(git_repository* repo) {
  git_oid id;
  LOOPR_TRY(check(git_reference_name_to_id(&id, repo, "HEAD"), "resolving HEAD"));
  return id;
}

Result<std::string> head_branch_ref(git_repository* repo) {
  LOOPR_ASSIGN(RefPtr head, make<RefPtr>("reading HEAD", git_reference_lookup, repo, "HEAD"));
  if (git_reference_type(head.get()) != GIT_REFERENCE_SYMBOLIC) {
    return make_error(
        ErrorCode::invalid_argument,
        "HEAD is detached in " + workdir_of(repo).string() + "; check out a branch first");
  }
  return std::string(git_reference_symbolic_target(head.get()));
}

Result<std::vector<std::string>> oneline_log(git_repository* repo, const git_oid& start, int n) {
  std::vector<std::string> lines;
  if (n <= 0) return lines;
  LOOPR_ASSIGN(RevwalkPtr walk, make<RevwalkPtr>("walking history", git_revwalk_new, repo));
  // git log's default order: newest first, parents never before their children.
  LOOPR_TRY(check(git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME),
                  "walking history"));
  LOOPR_TRY(check(git_revwalk_push(walk.get(), &start), "walking history"));
  git_oid id;
  int rc = 0;
  while (static_cast<int>(lines.size()) < n && (rc = git_revwalk_next(&id, walk.get())) == 0) {
    LOOPR_ASSIGN(CommitPtr commit, lookup_commit(repo, id));
    Buf short_id;
    LOOPR_TRY(
        check(git_object_short_id(&short_id.buf, reinterpret_cast<const git_object*>(commit.get())),
              "abbreviating " + to_hex(id)));
    const char* summary = git_commit_summary(commit.get());
    lines.push_back(short_id.str() + " " + (summary ? summary : ""));
  }
  if (rc < 0 && rc != GIT_ITEROVER) LOOPR_TRY(check(rc, "walking history"));
  return lines;
}

}  // namespace detail

Result<Worktree> Worktree::open(const std::filesystem::path& path) {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path, OpenMode::exact));
  if (git_repository_is_bare(repo.get())) {
    return make_error(ErrorCode::invalid_argument, path.string() + " is a bare repository");
  }
  return Worktree(workdir_of(repo.get()));
}

Result<std::string> Worktree::head_sha() const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid id, head_id(repo.get()));
  return to_hex(id);
}

Result<std::string> Worktree::branch() const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(std::string ref, head_branch_ref(repo.get()));
  constexpr std::string_view kHeads = "refs/heads/";
  if (ref.compare(0, kHeads.size(), kHeads) != 0) {
    return make_error(ErrorCode::invalid_argument, "HEAD points at " + ref + ", not a branch");
  }
  return ref.substr(kHeads.size());
}

Result<std::vector<std::string>> Worktree::log(int n) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid id, head_id(repo.get()));
  return oneline_log(repo.get(), id, n);
}

}  // namespace loopr::git
