// Opening a user's repository, discovering its base branch, and branch bookkeeping.
#include <algorithm>

#include <loopr/git/repository.hpp>

#include "git/history.hpp"
#include "git/libgit2.hpp"
#include "git/move_branch.hpp"

namespace loopr::git {

using namespace detail;

Result<Repository> Repository::open(const std::filesystem::path& inside) {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(inside, OpenMode::discover));
  if (git_repository_is_worktree(repo.get())) {
    // A loop's worktree (or any linked one) belongs to the main repository; loopr works there.
    std::filesystem::path common = without_trailing_slash(git_repository_commondir(repo.get()));
    LOOPR_ASSIGN(repo, open_repo(common, OpenMode::exact));
  }
  if (git_repository_is_bare(repo.get())) {
    return make_error(ErrorCode::invalid_argument,
                      "the repository at " +
                          without_trailing_slash(git_repository_path(repo.get())).string() +
                          " is bare; loopr needs a work tree (clone it without --bare)");
  }
  int unborn = git_repository_head_unborn(repo.get());
  LOOPR_TRY(check(unborn, "reading HEAD"));
  std::filesystem::path root = workdir_of(repo.get());
  if (unborn == 1) {
    return make_error(ErrorCode::invalid_argument,
                      "the repository at " + root.string() +
                          " has no commit yet; make a first commit, then run loopr again");
  }
  return Repository(root, without_trailing_slash(git_repository_commondir(repo.get())));
}

Worktree Repository::main_worktree() const { return Worktree(root_); }

Result<std::string> Repository::current_branch() const { return main_worktree().branch(); }

Result<std::string> Repository::branch_sha(const std::string& branch) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid tip, branch_tip(repo.get(), branch));
  return to_hex(tip);
}

Result<bool> Repository::has_branch(const std::string& branch) const {
  auto sha = branch_sha(branch);
  if (sha.ok()) return true;
  if (sha.error().code == ErrorCode::not_found) return false;
  return sha.take_error();
}

Result<std::string> Repository::create_branch(const std::string& name,
                                              const std::string& from) const {
  LOOPR_TRY(branch_ref_name(name));
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid tip, branch_tip(repo.get(), from));
  LOOPR_ASSIGN(CommitPtr commit, lookup_commit(repo.get(), tip));
  git_reference* raw = nullptr;
  int rc = git_branch_create(&raw, repo.get(), name.c_str(), commit.get(), /*force=*/0);
  RefPtr ref(raw);
  if (rc == GIT_EEXISTS) {
    return make_error(ErrorCode::already_exists, "branch '" + name + "' already exists");
  }
  LOOPR_TRY(check(rc, "creating branch '" + name + "' from '" + from + "'"));
  return to_hex(tip);
}

Result<void> Repository::delete_branch(const std::string& name) const {
  LOOPR_TRY(branch_ref_name(name));
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  git_reference* raw = nullptr;
  int rc = git_branch_lookup(&raw, repo.get(), name.c_str(), GIT_BRANCH_LOCAL);
  RefPtr ref(raw);
  if (rc == GIT_ENOTFOUND) return make_error(ErrorCode::not_found, "no branch '" + name + "'");
  LOOPR_TRY(check(rc, "looking up branch '" + name + "'"));
  auto registry = lock_worktree_registry();
  LOOPR_ASSIGN(auto checked_out, find_checkout(repo.get(), git_reference_name(ref.get())));
  if (checked_out) {
    return make_error(ErrorCode::conflict,
                      "branch '" + name + "' is checked out in a work tree; not deleting it");
  }
  return delete_branch_ref(repo.get(), ref.get());
}

Result<std::vector<std::string>> Repository::branches(const std::string& prefix) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  using IterPtr = Owned<git_branch_iterator, git_branch_iterator_free>;
  LOOPR_ASSIGN(IterPtr it, make<IterPtr>("listing branches", git_branch_iterator_new, repo.get(),
                                         GIT_BRANCH_LOCAL));
  std::vector<std::string> names;
  git_reference* raw = nullptr;
  git_branch_t type{};
  int rc = 0;
  while ((rc = git_branch_next(&raw, &type, it.get())) == 0) {
    RefPtr ref(raw);
    const char* name = nullptr;
    LOOPR_TRY(check(git_branch_name(&name, ref.get()), "reading a branch name"));
    std::string s = name;
    if (s.compare(0, prefix.size(), prefix) == 0) names.push_back(std::move(s));
  }
  if (rc != GIT_ITEROVER) LOOPR_TRY(check(rc, "listing branches"));
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::vector<std::string>> Repository::log(const std::string& branch, int n) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid tip, branch_tip(repo.get(), branch));
  return oneline_log(repo.get(), tip, n);
}

Result<std::optional<std::string>> Repository::first_parent_where(
    const std::string& branch, const std::function<bool(std::string_view message)>& stop,
    int max_commits) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid id, branch_tip(repo.get(), branch));
  for (int seen = 0; seen < max_commits; ++seen) {
    LOOPR_ASSIGN(CommitPtr commit, lookup_commit(repo.get(), id));
    const char* message = git_commit_message(commit.get());
    if (stop(message ? std::string_view(message) : std::string_view()))
      return std::optional<std::string>(to_hex(id));
    if (git_commit_parentcount(commit.get()) == 0) break;
    id = *git_commit_parent_id(commit.get(), 0);
  }
  return std::optional<std::string>();
}

Result<Identity> Repository::identity() const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  LOOPR_ASSIGN(SignaturePtr sig, default_signature(repo.get()));
  return Identity{sig->name, sig->email};
}

}  // namespace loopr::git
