#include <sys/stat.h>

#include <loopr/git/branches.hpp>
#include <loopr/git/cleanup.hpp>
#include <loopr/git/repository.hpp>

#include "git/libgit2.hpp"
#include "git/move_branch.hpp"

namespace loopr::git {

using namespace detail;

namespace {

Result<void> only_loopr(const std::string& branch) {
  if (branch.rfind("loopr/", 0) != 0)
    return make_error(ErrorCode::invalid_argument,
                      "refusing to touch branch '" + branch + "': loopr only removes its own");
  return loopr::ok();
}

// `<common git dir>/worktrees/<name>` has what git needs to know a worktree by that name.
bool registered(git_repository* repo, const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::path(git_repository_commondir(repo)) / "worktrees" / name;
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "gitdir", ec);
}

}  // namespace

Result<std::vector<std::string>> Cleanup::loopr_branches() const {
  LOOPR_ASSIGN(Repository r, Repository::open(root_));
  return r.branches("loopr/");
}

Result<std::vector<WorktreeInfo>> Cleanup::worktrees() const {
  LOOPR_ASSIGN(Repository r, Repository::open(root_));
  return r.list_worktrees();
}

Result<bool> Cleanup::merged_into(const std::string& branch, const std::string& into) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid tip, branch_tip(repo.get(), branch));
  LOOPR_ASSIGN(git_oid target, branch_tip(repo.get(), into));
  if (git_oid_equal(&tip, &target)) return true;
  int rc = git_graph_descendant_of(repo.get(), &target, &tip);
  LOOPR_TRY(check(rc, "comparing " + branch + " with " + into));
  return rc == 1;
}

Result<void> Cleanup::delete_branch(const std::string& branch) const {
  LOOPR_TRY(only_loopr(branch));
  LOOPR_ASSIGN(Repository r, Repository::open(root_));
  return r.delete_branch(branch);
}

Result<std::string> Cleanup::archive_branch(const std::string& branch,
                                            const std::string& loop_id) const {
  LOOPR_TRY(only_loopr(branch));
  LOOPR_ASSIGN(std::string ref_name, branch_ref_name(branch));
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  auto registry = lock_worktree_registry();
  LOOPR_ASSIGN(auto checked_out, find_checkout(repo.get(), ref_name));
  if (checked_out)
    return make_error(ErrorCode::conflict, "branch '" + branch + "' is checked out in " +
                                               checked_out->string() + "; not archiving it");
  for (int n = 1; n < 1000; ++n) {
    std::string name = git::archive_branch(loop_id) + (n == 1 ? "" : "-" + std::to_string(n));
    LOOPR_ASSIGN(RefPtr ref, make<RefPtr>("looking up " + ref_name, git_reference_lookup,
                                          repo.get(), ref_name.c_str()));
    auto renamed = rename_branch_ref(repo.get(), ref.get(), name);
    if (!renamed && renamed.error().code == ErrorCode::already_exists) continue;
    if (!renamed) return renamed.take_error();
    return name;
  }
  return make_error(ErrorCode::already_exists, "too many archived branches for " + loop_id);
}

Result<std::optional<std::int64_t>> Cleanup::moved_at(const std::string& branch) const {
  LOOPR_ASSIGN(std::string ref_name, branch_ref_name(branch));
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  using ReflogPtr = Owned<git_reflog, git_reflog_free>;
  LOOPR_ASSIGN(ReflogPtr log, make<ReflogPtr>("reading the reflog of " + branch, git_reflog_read,
                                              repo.get(), ref_name.c_str()));
  if (git_reflog_entrycount(log.get()) == 0) return std::optional<std::int64_t>();
  const git_reflog_entry* newest = git_reflog_entry_byindex(log.get(), 0);
  const git_signature* who = newest ? git_reflog_entry_committer(newest) : nullptr;
  if (!who) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(static_cast<std::int64_t>(who->when.time) * 1000);
}

Result<bool> Cleanup::prune_registration(const std::string& name) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  auto registry = lock_worktree_registry();
  if (!registered(repo.get(), name)) return false;
  LOOPR_ASSIGN(WorktreePtr wt, make<WorktreePtr>("looking up worktree '" + name + "'",
                                                 git_worktree_lookup, repo.get(), name.c_str()));
  if (git_worktree_validate(wt.get()) == 0) return false;  // its folder is there: in use
  git_worktree_prune_options opts = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
  LOOPR_TRY(check(git_worktree_prune(wt.get(), &opts), "pruning worktree record '" + name + "'"));
  return true;
}

std::uint64_t disk_usage(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto size_of = [](const fs::path& p) -> std::uint64_t {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return 0;
    return static_cast<std::uint64_t>(st.st_blocks) * 512;
  };
  if (!fs::exists(fs::symlink_status(path, ec))) return 0;
  std::uint64_t total = size_of(path);
  if (!fs::is_directory(fs::symlink_status(path, ec))) return total;
  const auto skip = fs::directory_options::skip_permission_denied;
  for (auto it = fs::recursive_directory_iterator(path, skip, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    total += size_of(it->path());
  return total;
}

}  // namespace loopr::git
