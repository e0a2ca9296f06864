// Loop worktrees: `.loopr/worktrees/<loop-id>`, registered with git as worktree `<loop-id>` so
// `git worktree list` and every other git tool see them.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include <loopr/core/clean_checkpoint.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/core/sweep_handoff.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>

#include "git/checkout_filters.hpp"
#include "git/libgit2.hpp"
#include "git/move_branch.hpp"

namespace loopr::git {

using namespace detail;

namespace {

constexpr std::string_view kHeads = "refs/heads/";

// Loop ids name a folder and git's `.git/worktrees/<name>`: keep them to a safe alphabet.
Result<void> check_worktree_name(const std::string& name) {
  bool valid = !name.empty() && name.size() <= 100 && name.front() != '.' && name.front() != '-';
  for (char c : name) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.');
  }
  if (!valid) {
    return make_error(ErrorCode::invalid_argument, "invalid worktree name '" + name + "'");
  }
  return loopr::ok();
}

struct WorktreeHead {
  std::string ref;  // `refs/heads/…`, empty when detached
  std::string sha;  // empty when unresolvable (a branch deleted behind git's back)
};

// A worktree's HEAD. For a registration whose folder is gone libgit2 cannot open the worktree,
// so git's own record (`<git-dir>/worktrees/<name>/HEAD`) is read directly.
Result<WorktreeHead> worktree_head(git_repository* main, git_worktree* wt,
                                   const std::filesystem::path& git_dir) {
  WorktreeHead head;
  std::string content;
  if (git_worktree_validate(wt) == 0) {
    LOOPR_ASSIGN(RepoPtr repo,
                 make<RepoPtr>("opening a worktree", git_repository_open_from_worktree, wt));
    LOOPR_ASSIGN(RefPtr ref,
                 make<RefPtr>("reading HEAD", git_reference_lookup, repo.get(), "HEAD"));
    if (git_reference_type(ref.get()) == GIT_REFERENCE_SYMBOLIC) {
      content = std::string("ref: ") + git_reference_symbolic_target(ref.get());
    } else {
      content = to_hex(*git_reference_target(ref.get()));
    }
  } else {
    std::ifstream in(git_dir / "worktrees" / git_worktree_name(wt) / "HEAD");
    std::getline(in, content);
  }
  if (content.rfind("ref: ", 0) == 0) {
    head.ref = content.substr(5);
    git_oid id;
    if (git_reference_name_to_id(&id, main, head.ref.c_str()) == 0) head.sha = to_hex(id);
  } else if (parse_oid(content).ok()) {
    head.sha = content;
  }
  return head;
}

Result<bool> is_locked(git_worktree* wt) {
  int rc = git_worktree_is_locked(nullptr, wt);
  LOOPR_TRY(check(rc, "reading the worktree lock"));
  return rc > 0;
}

Result<void> prune(git_worktree* wt, unsigned flags) {
  git_worktree_prune_options opts = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
  opts.flags = flags;
  return check(git_worktree_prune(wt, &opts),
               std::string("removing worktree '") + git_worktree_name(wt) + "'");
}

// libgit2 1.5 answers a lookup of an unknown worktree with a bare -1 (no GIT_ENOTFOUND, no
// message), so whether git knows the name is asked first, the way git_worktree_list decides it
// for each entry: `<common-dir>/worktrees/<name>` holds the files commondir, gitdir and HEAD.
// Three stats for the one name, not three per registered worktree (a daemon has 1,000).
Result<bool> has_worktree(git_repository* repo, const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::path(git_repository_commondir(repo)) / "worktrees" / name;
  std::error_code ec;
  for (const char* file : {"commondir", "gitdir", "HEAD"}) {
    if (!std::filesystem::is_regular_file(dir / file, ec)) return false;
  }
  return true;
}

Result<WorktreePtr> lookup_worktree(git_repository* repo, const std::string& name) {
  LOOPR_ASSIGN(bool known, has_worktree(repo, name));
  if (!known)
    return make_error(ErrorCode::not_found, "no worktree '" + name + "' in this repository");
  return make<WorktreePtr>("looking up worktree '" + name + "'", git_worktree_lookup, repo,
                           name.c_str());
}

// Undo a half-made worktree (libgit2 leaves the folder and registration behind on failure).
void discard_partial_worktree(git_repository* repo, const std::string& name,
                              const std::filesystem::path& path) {
  auto known = has_worktree(repo, name);
  git_worktree* raw = nullptr;
  if (known.ok() && *known && git_worktree_lookup(&raw, repo, name.c_str()) == 0) {
    WorktreePtr wt(raw);
    git_worktree_prune_options opts = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
    opts.flags =
        GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_WORKING_TREE | GIT_WORKTREE_PRUNE_LOCKED;
    git_worktree_prune(wt.get(), &opts);
  }
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

Result<void> write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return make_error(ErrorCode::io, "cannot write " + file.string());
  return loopr::ok();
}

// What git_worktree_add does (libgit2 1.5 src/libgit2/worktree.c: the same files, contents and
// checkout), without its git_branch_is_checked_out: that opens every registered worktree as a
// repository (~40 system calls and three config files each), which made adding the 1,000th
// worktree of a daemon several times slower than the first (tools/bench/RESULTS.md). The caller
// has asked find_checkout instead, under the registry lock. The lock is let go once the record
// is complete (its HEAD names the branch, so find_checkout sees it taken), before the checkout:
// merges and the other worktree maker need not wait for thousands of files to be written.
// Returns the work tree's path (and `registry` unlocked) or an error (and `registry` locked).
Result<std::filesystem::path> write_worktree(git_repository* repo, const std::string& name,
                                             const std::filesystem::path& path,
                                             const std::string& ref_name,
                                             std::unique_lock<std::mutex>& registry) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path common = fs::canonical(git_repository_commondir(repo), ec);
  if (ec) return make_error(ErrorCode::io, "resolving the git directory: " + ec.message());
  const fs::path gitdir = common / "worktrees" / name;
  // Both folders must be new (libgit2: GIT_MKDIR_EXCL).
  if (!fs::create_directory(gitdir, ec) || ec) {
    return make_error(
        ec ? ErrorCode::io : ErrorCode::already_exists,
        "cannot create " + gitdir.string() + (ec ? ": " + ec.message() : ": it exists"));
  }
  auto fill = [&]() -> Result<fs::path> {
    if (!fs::create_directory(path, ec) || ec) {
      return make_error(
          ec ? ErrorCode::io : ErrorCode::already_exists,
          "cannot create " + path.string() + (ec ? ": " + ec.message() : ": it exists"));
    }
    const fs::path workdir = fs::canonical(path, ec);
    if (ec) return make_error(ErrorCode::io, "resolving " + path.string() + ": " + ec.message());
    LOOPR_TRY(write_text(workdir / ".git", "gitdir: " + gitdir.string() + "/\n"));
    LOOPR_TRY(write_text(gitdir / "commondir", common.string() + "/\n"));
    LOOPR_TRY(write_text(gitdir / "gitdir", (workdir / ".git").string() + "\n"));
    LOOPR_TRY(write_text(gitdir / "HEAD", "ref: " + ref_name + "\n"));
    LOOPR_ASSIGN(RepoPtr wt, open_repo(workdir, OpenMode::exact));
    registry.unlock();
    git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;  // SAFE, git_worktree_add's default
    // Without any attribute source the filters cannot change a file, and libgit2 would still
    // look up each file's attributes (two realpath calls each: 1.3× git's time at 5,000 files).
    git_object* head_tree = nullptr;
    if (git_revparse_single(&head_tree, wt.get(), "HEAD^{tree}") == 0) {
      ObjectPtr owned(head_tree);
      opts.disable_filters = !checkout_may_filter(wt.get(), reinterpret_cast<git_tree*>(head_tree));
    }
    LOOPR_TRY(check(git_checkout_head(wt.get(), &opts), "checking out " + workdir.string()));
    return workdir;
  };
  auto made = fill();
  if (!made) {
    if (!registry.owns_lock()) registry.lock();
    fs::remove_all(gitdir, ec);  // the caller removes the work tree's folder
  }
  return made;
}

std::filesystem::path worktree_path(git_worktree* wt) {
  std::string s = git_worktree_path(wt);
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

Result<Worktree> Repository::add_worktree(const std::string& loop_id,
                                          const std::string& branch) const {
  LOOPR_TRY(check_worktree_name(loop_id));
  LOOPR_ASSIGN(std::string ref_name, branch_ref_name(branch));
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  std::filesystem::path path = RepoPaths(root_).worktree(loop_id);
  auto registry = lock_worktree_registry();

  LOOPR_ASSIGN(bool known, has_worktree(repo.get(), loop_id));
  if (known) {
    LOOPR_ASSIGN(WorktreePtr existing, lookup_worktree(repo.get(), loop_id));
    if (git_worktree_validate(existing.get()) == 0) {
      return make_error(ErrorCode::already_exists, "loop " + loop_id +
                                                       " already has a worktree at " +
                                                       worktree_path(existing.get()).string());
    }
    // Its folder was deleted by hand: drop git's stale record so the name can be reused.
    LOOPR_TRY(prune(existing.get(), 0));
  }
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    return make_error(ErrorCode::already_exists,
                      path.string() + " exists but is not a registered worktree; not touching it");
  }
  git_reference* ref_raw = nullptr;
  int rc = git_reference_lookup(&ref_raw, repo.get(), ref_name.c_str());
  RefPtr ref(ref_raw);
  if (rc == GIT_ENOTFOUND) return make_error(ErrorCode::not_found, "no branch '" + branch + "'");
  LOOPR_TRY(check(rc, "looking up branch '" + branch + "'"));
  LOOPR_ASSIGN(auto checked_out, find_checkout(repo.get(), ref_name));
  if (checked_out) {
    return make_error(ErrorCode::conflict, "branch '" + branch + "' is already checked out");
  }
  // Folders that exist once the first worktree is made (two threads may both make them).
  std::filesystem::create_directories(path.parent_path(), ec);
  if (!ec) std::filesystem::create_directories(git_dir_ / "worktrees", ec);
  if (ec) {
    return make_error(ErrorCode::io, "creating folders for " + path.string() + ": " + ec.message());
  }
  auto made = write_worktree(repo.get(), loop_id, path, ref_name, registry);
  if (!made) {
    discard_partial_worktree(repo.get(), loop_id, path);
    return made.take_error();
  }
  return Worktree(*made);
}

Result<Worktree> Repository::worktree(const std::string& loop_id) const {
  LOOPR_TRY(check_worktree_name(loop_id));
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  LOOPR_ASSIGN(WorktreePtr wt, lookup_worktree(repo.get(), loop_id));
  if (git_worktree_validate(wt.get()) != 0) {
    return make_error(ErrorCode::not_found, "the folder of worktree '" + loop_id + "' (" +
                                                worktree_path(wt.get()).string() + ") is gone");
  }
  return Worktree(worktree_path(wt.get()));
}

Result<std::vector<WorktreeInfo>> Repository::list_worktrees() const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  auto registry = lock_worktree_registry();
  StrArray names;
  LOOPR_TRY(check(git_worktree_list(&names.arr, repo.get()), "listing worktrees"));
  std::vector<WorktreeInfo> list;
  for (std::size_t i = 0; i < names.arr.count; ++i) {
    LOOPR_ASSIGN(WorktreePtr wt, lookup_worktree(repo.get(), names.arr.strings[i]));
    WorktreeInfo info;
    info.name = git_worktree_name(wt.get());
    info.path = worktree_path(wt.get()).string();
    info.valid = git_worktree_validate(wt.get()) == 0;
    LOOPR_ASSIGN(info.locked, is_locked(wt.get()));
    LOOPR_ASSIGN(WorktreeHead head, worktree_head(repo.get(), wt.get(), git_dir_));
    if (head.ref.compare(0, kHeads.size(), kHeads) == 0)
      info.branch = head.ref.substr(kHeads.size());
    info.sha = head.sha;
    list.push_back(std::move(info));
  }
  std::sort(list.begin(), list.end(),
            [](const WorktreeInfo& a, const WorktreeInfo& b) { return a.name < b.name; });
  return list;
}

Result<ArchiveOutcome> Repository::archive_worktree(const std::string& loop_id,
                                                    const std::string& message) const {
  LOOPR_TRY(check_worktree_name(loop_id));
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  auto registry = lock_worktree_registry();
  LOOPR_ASSIGN(WorktreePtr wt, lookup_worktree(repo.get(), loop_id));
  ArchiveOutcome outcome;
  if (git_worktree_validate(wt.get()) == 0) {
    // Nothing uncommitted may be lost with the folder: it becomes one last commit.
    LOOPR_ASSIGN(CommitOutcome leftovers, Worktree(worktree_path(wt.get())).checkpoint(message));
    outcome.committed_leftovers = leftovers.kind == CommitOutcome::Kind::committed;
  }
  LOOPR_ASSIGN(WorktreeHead head, worktree_head(repo.get(), wt.get(), git_dir_));
  if (head.sha.empty()) {
    return make_error(ErrorCode::not_found,
                      "worktree '" + loop_id + "' has no resolvable HEAD; not archiving it");
  }
  // The folder goes first, so the branch is checked out nowhere when it is renamed.
  LOOPR_TRY(prune(wt.get(), GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_WORKING_TREE));

  LOOPR_ASSIGN(git_oid tip, parse_oid(head.sha));
  LOOPR_ASSIGN(CommitPtr commit, lookup_commit(repo.get(), tip));
  bool is_branch = head.ref.compare(0, kHeads.size(), kHeads) == 0;
  for (int n = 1; n < 1000; ++n) {
    std::string name = archive_branch(loop_id) + (n == 1 ? "" : "-" + std::to_string(n));
    if (is_branch) {
      LOOPR_ASSIGN(RefPtr branch, make<RefPtr>("looking up " + head.ref, git_reference_lookup,
                                               repo.get(), head.ref.c_str()));
      auto renamed = rename_branch_ref(repo.get(), branch.get(), name);
      if (!renamed && renamed.error().code == ErrorCode::already_exists) continue;
      if (!renamed) return renamed.take_error();
    } else {  // detached HEAD: keep the commit reachable under the archive name
      git_reference* raw = nullptr;
      int rc = git_branch_create(&raw, repo.get(), name.c_str(), commit.get(), /*force=*/0);
      RefPtr created(raw);
      if (rc == GIT_EEXISTS) continue;
      LOOPR_TRY(check(rc, "renaming " + head.ref + " to " + name));
    }
    outcome.branch = name;
    outcome.sha = head.sha;
    return outcome;
  }
  return make_error(ErrorCode::already_exists, "too many archived branches for " + loop_id);
}

Result<void> Repository::remove_worktree(const std::string& loop_id, RemoveMode mode) const {
  LOOPR_TRY(check_worktree_name(loop_id));
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  auto registry = lock_worktree_registry();
  LOOPR_ASSIGN(WorktreePtr wt, lookup_worktree(repo.get(), loop_id));
  if (mode == RemoveMode::refuse_if_dirty && git_worktree_validate(wt.get()) == 0) {
    LOOPR_ASSIGN(std::string status, Worktree(worktree_path(wt.get())).status());
    if (!status.empty()) {
      return make_error(ErrorCode::conflict, "worktree '" + loop_id +
                                                 "' has uncommitted changes; checkpoint or "
                                                 "archive it first:\n" +
                                                 status);
    }
  }
  unsigned flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_WORKING_TREE;
  if (mode == RemoveMode::force) flags |= GIT_WORKTREE_PRUNE_LOCKED;
  // What was kept in memory for the work tree goes with it (a new one at its path starts afresh).
  const std::filesystem::path gone = worktree_path(wt.get());
  drop_handed_sweep(gone);
  drop_clean_checkpoint(gone);
  return prune(wt.get(), flags);
}

}  // namespace loopr::git
