#include "git/move_branch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace loopr::git::detail {

namespace {

Result<std::optional<std::string>> symbolic_head(git_repository* repo) {
  LOOPR_ASSIGN(RefPtr head, make<RefPtr>("reading HEAD", git_reference_lookup, repo, "HEAD"));
  if (git_reference_type(head.get()) != GIT_REFERENCE_SYMBOLIC) return std::optional<std::string>();
  return std::optional<std::string>(git_reference_symbolic_target(head.get()));
}

// The first line of `<dir>/<name>/HEAD`, trailing whitespace dropped; empty if it cannot be
// read. One openat relative to the registry's descriptor and one read into a stack buffer: this
// runs for every registered worktree at every merge (a daemon has 1,000), where a stream and a
// full path each time were 8 % of the daemon's CPU at 1,000 loops.
std::string read_head_line(int dir, const char* name) {
  const std::string rel = std::string(name) + "/HEAD";
  const int fd = ::openat(dir, rel.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return {};
  char buf[512];
  ssize_t n;
  do n = ::read(fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return {};
  std::string line(buf, static_cast<std::size_t>(n));
  if (auto nl = line.find('\n'); nl != std::string::npos) line.resize(nl);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

int collect_conflict(git_checkout_notify_t /*why*/, const char* path, const git_diff_file*,
                     const git_diff_file*, const git_diff_file*, void* payload) {
  static_cast<std::vector<std::string>*>(payload)->emplace_back(path);
  return 0;
}

// Brings a work tree's index and files from tree `from` to tree `to`. Returns the paths whose
// uncommitted state would be overwritten (then nothing was written: libgit2 computes every
// conflict before it touches the disk), or an empty list on success.
Result<std::vector<std::string>> checkout_tree(git_repository* repo, git_tree* from, git_tree* to) {
  std::vector<std::string> blocked;
  git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
  // SAFE is `git checkout`'s two-way merge: update what still matches `from`, keep the user's
  // edits to anything else, refuse when an edit (or an untracked file) is in the way.
  opts.checkout_strategy = GIT_CHECKOUT_SAFE;
  opts.baseline = from;
  opts.notify_flags = GIT_CHECKOUT_NOTIFY_CONFLICT;
  opts.notify_cb = collect_conflict;
  opts.notify_payload = &blocked;
  int rc = git_checkout_tree(repo, reinterpret_cast<const git_object*>(to), &opts);
  if (rc == GIT_ECONFLICT) {
    std::sort(blocked.begin(), blocked.end());
    blocked.erase(std::unique(blocked.begin(), blocked.end()), blocked.end());
    if (blocked.empty()) blocked.emplace_back("(unnamed path)");
    return blocked;
  }
  LOOPR_TRY(check(rc, "checking out in " + workdir_of(repo).string()));
  blocked.clear();
  return blocked;
}

using ConfigIterPtr = Owned<git_config_iterator, git_config_iterator_free>;

// Whether the repository's config has any `branch.<short>.*` entry. Read with a plain iterator:
// the regex-matching APIs leak on every entry that does not match (see delete_branch_ref).
Result<bool> has_branch_config(git_repository* repo, const char* short_name) {
  LOOPR_ASSIGN(ConfigPtr config, make<ConfigPtr>("reading config", git_repository_config, repo));
  LOOPR_ASSIGN(ConfigIterPtr it,
               make<ConfigIterPtr>("reading config", git_config_iterator_new, config.get()));
  const std::string prefix = std::string("branch.") + short_name + ".";
  git_config_entry* entry = nullptr;
  int rc = 0;
  while ((rc = git_config_next(&entry, it.get())) == 0) {
    if (std::strncmp(entry->name, prefix.c_str(), prefix.size()) == 0) return true;
  }
  if (rc != GIT_ITEROVER) LOOPR_TRY(check(rc, "reading config"));
  return false;
}

const char* short_branch_name(git_reference* branch) {
  return git_reference_name(branch) + std::strlen("refs/heads/");
}

}  // namespace

Result<void> delete_branch_ref(git_repository* repo, git_reference* branch) {
  const std::string name = git_reference_name(branch);
  if (!git_reference_is_branch(branch))
    return make_error(ErrorCode::invalid_argument, name + " is not a branch");
  LOOPR_ASSIGN(bool configured, has_branch_config(repo, short_branch_name(branch)));
  // A branch with config (never one loopr made; a user's upstream on it, say) takes libgit2's
  // own path, which removes that config with the leaking match (no public API does it otherwise).
  if (configured) return check(git_branch_delete(branch), "deleting branch '" + name + "'");
  int head = git_branch_is_head(branch);
  LOOPR_TRY(check(head < 0 ? head : 0, "reading HEAD"));
  if (head == 1)
    return make_error(ErrorCode::conflict, "branch '" + name + "' is the repository's HEAD");
  return check(git_reference_delete(branch), "deleting branch '" + name + "'");
}

Result<RefPtr> rename_branch_ref(git_repository* repo, git_reference* branch,
                                 const std::string& new_name) {
  const std::string old_ref = git_reference_name(branch);
  if (!git_reference_is_branch(branch))
    return make_error(ErrorCode::invalid_argument, old_ref + " is not a branch");
  LOOPR_ASSIGN(bool configured, has_branch_config(repo, short_branch_name(branch)));
  const std::string new_ref = "refs/heads/" + new_name;
  git_reference* raw = nullptr;
  int rc = 0;
  if (configured) {  // as in delete_branch_ref: libgit2 moves the config section too
    rc = git_branch_move(&raw, branch, new_name.c_str(), /*force=*/0);
  } else {  // git_branch_move's reflog message
    const std::string message = "branch: renamed " + old_ref + " to " + new_ref;
    rc = git_reference_rename(&raw, branch, new_ref.c_str(), /*force=*/0, message.c_str());
  }
  RefPtr renamed(raw);
  if (rc == GIT_EEXISTS) return make_error(ErrorCode::already_exists, new_ref + " exists");
  LOOPR_TRY(check(rc, "renaming " + old_ref + " to " + new_ref));
  return renamed;
}

Result<std::optional<std::filesystem::path>> find_checkout(git_repository* main_repo,
                                                           const std::string& ref_name) {
  using Found = std::optional<std::filesystem::path>;
  LOOPR_ASSIGN(auto main_head, symbolic_head(main_repo));
  if (main_head && *main_head == ref_name) return Found(workdir_of(main_repo));
  // Each linked worktree's HEAD is git's file `<common-dir>/worktrees/<name>/HEAD`: read those (as
  // git does) and open only a worktree that names the branch. Opening every registered worktree
  // as a repository (what git_branch_is_checked_out does) costs ~40 system calls and three config
  // files each, at every merge: quadratic with a daemon's 1,000 worktrees (tools/bench/RESULTS.md).
  const std::filesystem::path registry =
      std::filesystem::path(git_repository_commondir(main_repo)) / "worktrees";
  const std::string wanted = "ref: " + ref_name;
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(registry.c_str())) {
    while (const dirent* entry = ::readdir(dir)) {
      if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
      std::string head = read_head_line(::dirfd(dir), entry->d_name);
      // An unreadable HEAD gets libgit2's full look below rather than a guess.
      if (head.empty() || head == wanted) names.emplace_back(entry->d_name);
    }
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) return Found();
  StrArray known;  // the folders git counts as worktrees (a lookup of any other fails)
  LOOPR_TRY(check(git_worktree_list(&known.arr, main_repo), "listing worktrees"));
  for (const auto& name : names) {
    if (std::none_of(known.arr.strings, known.arr.strings + known.arr.count,
                     [&](const char* k) { return name == k; }))
      continue;
    LOOPR_ASSIGN(WorktreePtr wt, make<WorktreePtr>("looking up a worktree", git_worktree_lookup,
                                                   main_repo, name.c_str()));
    // A registration whose folder is gone has no files to update.
    if (git_worktree_validate(wt.get()) != 0) continue;
    LOOPR_ASSIGN(RepoPtr repo,
                 make<RepoPtr>("opening a worktree", git_repository_open_from_worktree, wt.get()));
    LOOPR_ASSIGN(auto head, symbolic_head(repo.get()));
    if (head && *head == ref_name) return Found(workdir_of(repo.get()));
  }
  return Found();
}

Result<MoveReport> move_branch(git_repository* repo, const std::string& ref_name,
                               const git_oid& old_tip, const git_oid& new_tip,
                               const std::optional<std::filesystem::path>& checkout,
                               const std::string& reflog_message) {
  RepoPtr checkout_repo;
  TreePtr old_tree;
  TreePtr new_tree;
  git_repository* target = repo;
  if (checkout) {
    LOOPR_ASSIGN(checkout_repo, open_repo(*checkout, OpenMode::exact));
    target = checkout_repo.get();
    // A user half-way through a merge, rebase or cherry-pick there owns that branch for now.
    int state = git_repository_state(target);
    LOOPR_TRY(check(state, "reading the state of " + checkout->string()));
    if (state != GIT_REPOSITORY_STATE_NONE) {
      return make_error(ErrorCode::conflict, "a merge, rebase or similar is in progress in " +
                                                 checkout->string() + "; not moving " + ref_name +
                                                 " under it");
    }
    // Files are only touched for the tip we computed against; the CAS below catches later moves.
    git_oid current;
    LOOPR_TRY(check(git_reference_name_to_id(&current, target, ref_name.c_str()),
                    "resolving " + ref_name));
    if (!git_oid_equal(&current, &old_tip)) return MoveReport{MoveReport::Kind::ref_moved, {}};
    LOOPR_ASSIGN(old_tree, commit_tree(target, old_tip));
    LOOPR_ASSIGN(new_tree, commit_tree(target, new_tip));
    LOOPR_ASSIGN(auto blocked, checkout_tree(target, old_tree.get(), new_tree.get()));
    if (!blocked.empty()) return MoveReport{MoveReport::Kind::local_changes, std::move(blocked)};
  }
  // Through the checkout's own repository handle, so its HEAD reflog records the move too.
  git_reference* raw = nullptr;
  int rc = git_reference_create_matching(&raw, target, ref_name.c_str(), &new_tip, /*force=*/1,
                                         &old_tip, reflog_message.c_str());
  RefPtr moved(raw);
  // EMODIFIED: the tip is not old_tip any more. ELOCKED: someone holds the ref's lock file
  // right now. Either way another writer got there first, and nothing here has moved.
  if (rc == GIT_EMODIFIED || rc == GIT_ELOCKED) {
    if (checkout) {
      // Someone moved the branch between our check and the swap: put the files back.
      LOOPR_ASSIGN(auto blocked, checkout_tree(target, new_tree.get(), old_tree.get()));
      if (!blocked.empty()) {
        return make_error(ErrorCode::conflict,
                          ref_name + " moved while its work tree was being updated; " + "check " +
                              checkout->string());
      }
    }
    return MoveReport{MoveReport::Kind::ref_moved, {}};
  }
  LOOPR_TRY(check(rc, "moving " + ref_name));
  return MoveReport{MoveReport::Kind::moved, {}};
}

}  // namespace loopr::git::detail
