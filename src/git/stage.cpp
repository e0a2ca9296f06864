// Staging a work tree for a checkpoint (git/stage.hpp). The special-file sweep already walks the
// whole work tree with lstat; it also lists what it leaves, and the staging compares that list
// with the index's stat data instead of walking the tree a second time (git_index_add_all).
#include "git/stage.hpp"

#include <sys/stat.h>

#include <atomic>
#include <fstream>

#include <loopr/core/repo_paths.hpp>
#include <loopr/core/worktree_sweep.hpp>
#include <loopr/git/test_outputs.hpp>
#include <loopr/git/work_tree_state.hpp>

namespace loopr::git {

using namespace detail;

namespace {

std::atomic<std::uint64_t> g_git_walks{0};

// git_index_add_all callback: 0 stages the path, > 0 skips it.
int skip_private_paths(const char* path, const char* /*matched_pathspec*/, void* /*payload*/) {
  return is_loopr_private_path(path) ? 1 : 0;
}

// The checkout's paths the executor shows in this worktree (kWorktreeMountsFile in its git admin
// folder): their mount points (an empty folder or file) or links are never committed. As ignore
// rules of this repository handle only, so they hold for untracked paths and nothing else.
// The outputs the tests leave behind (kTestOutputsFile in the common git folder, written by the
// baseline check) are ignored the same way: never committed from any loop's worktree.
Result<void> ignore_checkout_mounts(git_repository* repo) {
  const char* admin = git_repository_path(repo);
  if (!admin) return ok();
  std::string rules;
  for (auto file : {std::filesystem::path(admin) / kWorktreeMountsFile,
                    std::filesystem::path(git_repository_commondir(repo)) / kTestOutputsFile}) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line.find_first_of("\\[]*?!#") == std::string::npos)
        rules += "/" + line + "\n";
  }
  if (rules.empty()) return ok();
  return check(git_ignore_add_rule(repo, rules.c_str()), "reading the worktree's mounted paths");
}

// Whether the sweep's list can stand in for git's walk with this index: every entry a plain
// stage-0 file or symlink whose stat data git trusts, and paths compared byte for byte.
bool list_can_stand_in(git_index* index) {
  if (git_index_caps(index) & GIT_INDEX_CAPABILITY_IGNORE_CASE) return false;
  for (std::size_t i = 0, n = git_index_entrycount(index); i < n; ++i) {
    const git_index_entry* e = git_index_get_byindex(index, i);
    if (e->mode == GIT_FILEMODE_COMMIT || git_index_entry_stage(e) != 0 ||
        (e->flags & GIT_INDEX_ENTRY_VALID) != 0 || e->flags_extended != 0)
      return false;
  }
  return true;
}

// The mode git records for what lstat shows (a regular file or a symlink).
std::uint32_t git_mode(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return GIT_FILEMODE_LINK;
  return (st.st_mode & S_IXUSR) ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
}

// Whether the stat data the index keeps still match: git's own check (core.checkStat=default,
// core.trustctime) without the device, which libgit2 does not record.
bool same_stat(const git_index_entry& e, const struct stat& st) {
  return e.mode == git_mode(st) && e.file_size == static_cast<std::uint32_t>(st.st_size) &&
         e.mtime.seconds == static_cast<std::int32_t>(st.st_mtim.tv_sec) &&
         e.mtime.nanoseconds == static_cast<std::uint32_t>(st.st_mtim.tv_nsec) &&
         e.ctime.seconds == static_cast<std::int32_t>(st.st_ctim.tv_sec) &&
         e.ctime.nanoseconds == static_cast<std::uint32_t>(st.st_ctim.tv_nsec) &&
         e.ino == static_cast<std::uint32_t>(st.st_ino) &&
         e.uid == static_cast<std::uint32_t>(st.st_uid) &&
         e.gid == static_cast<std::uint32_t>(st.st_gid);
}

// git's racy-clean rule: an entry whose mtime is not older than the index file's may have been
// written again within the same clock tick after it was staged, so its stat data prove nothing.
bool racy(const git_index_entry& e, const struct timespec& index_mtime) {
  const auto s = static_cast<std::int64_t>(e.mtime.seconds);
  return s > index_mtime.tv_sec ||
         (s == index_mtime.tv_sec && e.mtime.nanoseconds >= index_mtime.tv_nsec);
}

// What the sweep's walk showed that may need staging, in walk order (a folder before its
// contents). Built during the walk from the index in memory only: nothing in the work tree is
// read through libgit2 before the sweep has finished (a FIFO `.gitignore` would block it).
struct Listing {
  enum class Kind { untracked_folder, untracked, changed, nested_repository };
  struct Item {
    Kind kind;
    std::string path;
  };
  git_index* index;
  struct timespec index_mtime;
  std::vector<Item> items;
  std::vector<bool> seen;  // by index position: the tracked entries found as files

  void see(const std::string& rel, const struct stat* st) {
    const std::string_view name = std::string_view(rel).substr(rel.rfind('/') + 1);
    if (name == ".git") {
      // A repository inside the work tree: git stages it as a gitlink, this list cannot.
      items.push_back({Kind::nested_repository, rel.substr(0, rel.size() - 4)});
      return;
    }
    if (st == nullptr) {
      std::size_t at = 0;
      if (git_index_find_prefix(&at, index, (rel + "/").c_str()) != 0)
        items.push_back({Kind::untracked_folder, rel});
      return;
    }
    std::size_t at = 0;
    if (git_index_find(&at, index, rel.c_str()) != 0) {
      items.push_back({Kind::untracked, rel});
      return;
    }
    seen[at] = true;
    const git_index_entry* e = git_index_get_byindex(index, at);
    if (!same_stat(*e, *st) || racy(*e, index_mtime)) {
      items.push_back({Kind::changed, rel});
    }
  }
};

// done_unchanged: the listing found nothing to stage, so the index in memory is the file's.
enum class Staged { done, done_unchanged, needs_git_walk };

// Applies the listing as `git add -A` would: tracked entries not seen are removed, changed ones
// hashed again, untracked ones added unless ignored (an ignored folder holds only ignored
// untracked files). Needs_git_walk when a nested repository is where git would look.
Result<Staged> apply(git_repository* repo, const Listing& list, const std::filesystem::path& path) {
  git_index* index = list.index;
  std::string ignored;  // the ignored untracked folder the walk is in ("dir/"), or ""
  auto inside = [&](const std::string& rel) {
    if (!ignored.empty() && rel.compare(0, ignored.size(), ignored) != 0) ignored.clear();
    return !ignored.empty();
  };
  auto is_ignored = [&](const std::string& rel) -> Result<bool> {
    int out = 0;
    LOOPR_TRY(check(git_ignore_path_is_ignored(&out, repo, rel.c_str()),
                    "asking git whether " + rel + " is ignored"));
    return out != 0;
  };
  std::vector<std::string> to_add;
  for (const Listing::Item& item : list.items) {
    if (inside(item.path) && item.kind != Listing::Kind::changed) continue;
    if (is_loopr_private_path(item.path)) continue;
    switch (item.kind) {
      case Listing::Kind::nested_repository:
        return Staged::needs_git_walk;
      case Listing::Kind::untracked_folder: {
        LOOPR_ASSIGN(bool skip, is_ignored(item.path + "/"));
        if (skip) ignored = item.path + "/";
        break;
      }
      case Listing::Kind::untracked: {
        LOOPR_ASSIGN(bool skip, is_ignored(item.path));
        if (!skip) to_add.push_back(item.path);
        break;
      }
      case Listing::Kind::changed:
        to_add.push_back(item.path);
        break;
    }
  }
  std::vector<std::string> gone;
  for (std::size_t i = 0; i < list.seen.size(); ++i) {
    const char* p = git_index_get_byindex(index, i)->path;
    if (!list.seen[i] && !is_loopr_private_path(p)) gone.emplace_back(p);
  }
  for (const std::string& rel : gone)
    LOOPR_TRY(check(git_index_remove_bypath(index, rel.c_str()),
                    "unstaging " + rel + " in " + path.string()));
  for (const std::string& rel : to_add)
    LOOPR_TRY(
        check(git_index_add_bypath(index, rel.c_str()), "staging " + rel + " in " + path.string()));
  return gone.empty() && to_add.empty() ? Staged::done_unchanged : Staged::done;
}

// What git does not track after staging, of what the listing saw: the first untracked path on
// each branch of the tree (the walk order puts a folder before its contents).
std::vector<std::string> untracked_roots(git_index* index, const SweptListing& listing) {
  std::vector<std::string> roots;
  std::string folder;  // the untracked folder the walk is in ("dir/"), or ""
  for (const SweptListing::Entry& e : listing.entries) {
    if (!folder.empty() && e.rel.compare(0, folder.size(), folder) == 0) continue;
    folder.clear();
    std::size_t at = 0;
    const bool tracked = e.folder ? git_index_find_prefix(&at, index, (e.rel + "/").c_str()) == 0
                                  : git_index_find(&at, index, e.rel.c_str()) == 0;
    if (tracked) continue;
    roots.push_back(e.rel);
    if (e.folder) folder = e.rel + "/";
  }
  return roots;
}

}  // namespace

std::uint64_t checkpoint_git_walks() { return g_git_walks.load(std::memory_order_relaxed); }

Result<StagedIndex> detail::stage_all(git_repository* repo, const std::filesystem::path& path,
                                      const SweptListing* handed) {
  LOOPR_TRY(ignore_checkout_mounts(repo));
  LOOPR_ASSIGN(IndexPtr index, make<IndexPtr>("opening the index", git_repository_index, repo));
  struct stat index_st {};
  const char* index_file = git_index_path(index.get());
  const bool listed =
      list_can_stand_in(index.get()) && index_file != nullptr && ::stat(index_file, &index_st) == 0;
  Listing list{index.get(), index_st.st_mtim, {}, {}};
  list.seen.assign(git_index_entrycount(index.get()), false);
  const SweepVisitor visit = [&list](const std::string& rel, const struct stat* st) {
    list.see(rel, st);
  };
  // Before libgit2 reads anything in the work tree: a FIFO (say, `.gitignore`) would block this
  // thread for good, and a setuid bit must not stay on the host (core/worktree_sweep.hpp).
  SweepReport swept;
  if (listed && handed != nullptr)
    handed->replay(visit);  // that sweep found nothing it could not remove (executor.cpp)
  else
    swept = sweep_worktree(workdir_of(repo), listed ? &visit : nullptr);
  if (!swept.failed.empty())
    return make_error(ErrorCode::io, "the worktree " + path.string() +
                                         " holds files loopr does not commit and cannot remove: " +
                                         describe(swept));
  count_work_tree_read();
  if (listed) {
    LOOPR_ASSIGN(Staged staged, apply(repo, list, path));
    if (staged != Staged::needs_git_walk) {
      std::optional<std::vector<std::string>> untracked;
      if (handed != nullptr) untracked = untracked_roots(index.get(), *handed);
      return StagedIndex{std::move(index), staged == Staged::done, std::move(untracked)};
    }
  }
  // Like `git add -A`: new and modified files are staged, deleted ones removed, ignored skipped.
  g_git_walks.fetch_add(1, std::memory_order_relaxed);
  LOOPR_TRY(check(
      git_index_add_all(index.get(), nullptr, GIT_INDEX_ADD_DEFAULT, skip_private_paths, nullptr),
      "staging changes in " + path.string()));
  return StagedIndex{std::move(index), true, std::nullopt};  // git's walk does not say what it changed
}

Result<StagedIndex> detail::stage_written(git_repository* repo, const std::filesystem::path& path,
                                          const std::vector<std::string>& written) {
  LOOPR_TRY(ignore_checkout_mounts(repo));
  LOOPR_ASSIGN(IndexPtr index, make<IndexPtr>("opening the index", git_repository_index, repo));
  const std::filesystem::path workdir = workdir_of(repo);
  bool changed = false;
  for (const std::string& rel : written) {
    if (rel.empty() || is_loopr_private_path(rel)) continue;
    std::error_code ec;
    const auto st = std::filesystem::symlink_status(workdir / rel, ec);
    const bool tracked = git_index_get_bypath(index.get(), rel.c_str(), 0) != nullptr;
    if (!std::filesystem::exists(st)) {
      if (tracked)
        LOOPR_TRY(check(git_index_remove_bypath(index.get(), rel.c_str()),
                        "unstaging " + rel + " in " + path.string()));
      changed = changed || tracked;
      continue;
    }
    if (!tracked) {
      int ignored = 0;
      LOOPR_TRY(check(git_ignore_path_is_ignored(&ignored, repo, rel.c_str()),
                      "asking git whether " + rel + " is ignored"));
      if (ignored) continue;
    }
    LOOPR_TRY(check(git_index_add_bypath(index.get(), rel.c_str()),
                    "staging " + rel + " in " + path.string()));
    changed = true;  // its stat data at least
  }
  return StagedIndex{std::move(index), changed, std::nullopt};
}

}  // namespace loopr::git
