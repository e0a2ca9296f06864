// Reading a committed file, and clearing what a killed process left in the git folder. These
// are the only places outside libgit2 that know git's layout (`refs/heads/…`, `worktrees/<name>`);
// callers name branches and worktrees, never paths under `.git`.
#include <algorithm>
#include <system_error>

#include <loopr/git/repository.hpp>

#include "git/libgit2.hpp"

namespace loopr::git {

using namespace detail;

namespace {

// The lock files git (and libgit2) take inside a worktree's record `worktrees/<name>/`.
constexpr const char* kWorktreeLocks[] = {"index.lock", "HEAD.lock", "ORIG_HEAD.lock",
                                          "config.lock", "logs/HEAD.lock"};

std::filesystem::path common_dir(git_repository* repo) {
  std::string s = git_repository_commondir(repo);
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

Result<std::string> Repository::read_file(const std::string& branch, const std::string& path,
                                          std::size_t max_bytes) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid tip, branch_tip(repo.get(), branch));
  LOOPR_ASSIGN(TreePtr tree, commit_tree(repo.get(), tip));
  git_tree_entry* raw_entry = nullptr;
  int rc = git_tree_entry_bypath(&raw_entry, tree.get(), path.c_str());
  TreeEntryPtr entry(raw_entry);
  if (rc == GIT_ENOTFOUND || (rc == 0 && git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB))
    return make_error(ErrorCode::not_found, "no file " + path + " on branch " + branch);
  LOOPR_TRY(check(rc, "looking up " + path + " on branch " + branch));
  LOOPR_ASSIGN(BlobPtr blob,
               make<BlobPtr>("reading " + path + " on branch " + branch, git_blob_lookup,
                             repo.get(), git_tree_entry_id(entry.get())));
  const auto* data = static_cast<const char*>(git_blob_rawcontent(blob.get()));
  auto size = static_cast<std::size_t>(git_blob_rawsize(blob.get()));
  return std::string(data, std::min(size, max_bytes + 1));
}

Result<bool> Repository::drop_broken_worktree_registration(const std::string& name) const {
  if (name.empty() || name.find('/') != std::string::npos || name.front() == '.')
    return make_error(ErrorCode::invalid_argument, "invalid worktree name '" + name + "'");
  if (worktree(name)) return false;  // git can use it: not debris
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  auto registry = lock_worktree_registry();
  const std::filesystem::path record = common_dir(repo.get()) / "worktrees" / name;
  std::error_code ec;
  if (!std::filesystem::exists(record, ec)) return false;
  // A registration git can open is kept even when its folder is gone (add_worktree prunes it).
  git_worktree* raw = nullptr;
  if (git_worktree_lookup(&raw, repo.get(), name.c_str()) == 0) {
    WorktreePtr wt(raw);
    return false;
  }
  std::filesystem::remove_all(record, ec);
  if (ec)
    return make_error(ErrorCode::io, "cannot remove " + record.string() + ": " + ec.message());
  return true;
}

Result<std::vector<std::string>> Repository::remove_stale_locks(
    const std::vector<std::string>& branches, const std::vector<std::string>& worktrees) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  const std::filesystem::path common = common_dir(repo.get());
  std::vector<std::filesystem::path> candidates;
  for (const auto& branch : branches) {
    LOOPR_ASSIGN(std::string ref, branch_ref_name(branch));
    candidates.push_back(common / (ref + ".lock"));
  }
  for (const auto& name : worktrees) {
    if (name.empty() || name.find('/') != std::string::npos || name.front() == '.') continue;
    for (const char* lock : kWorktreeLocks)
      candidates.push_back(common / "worktrees" / name / lock);
  }
  std::vector<std::string> removed;
  for (const auto& file : candidates) {
    std::error_code ec;
    if (std::filesystem::remove(file, ec)) removed.push_back(file.string());
  }
  return removed;
}

}  // namespace loopr::git
