// The one place that touches libgit2 directly: process-wide init, the error translation, RAII
// handles for every libgit2 object we use, and small lookups shared by the git module's files.
#pragma once

#include <git2.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/result.hpp>

namespace loopr::git::detail {

/// Calls git_libgit2_init() exactly once per process (std::call_once); never shut down, so
/// handles living in static objects stay valid until exit. Every entry point calls it.
void ensure_libgit2();

/// Held while git's worktree registry (`<git-dir>/worktrees/`) changes, and while loopr relies on
/// knowing where a branch is checked out. libgit2 1.5 answers "is this branch checked out?" (also
/// inside git_worktree_add) by opening every registered worktree, and a worktree that another
/// thread is creating or pruning at that moment turns the answer into a false "yes" (an error in
/// its per-worktree callback becomes 1: `error = cb(...) != 0`, libgit2 #7231). One lock per
/// process: a daemon serves one repository, and adding a worktree is rare next to committing.
std::unique_lock<std::mutex> lock_worktree_registry();

/// Translates a libgit2 return code into a Result, once: negative codes become an Error whose
/// message is `what` plus git_error_last()'s text (thread-local in libgit2, so read right away).
Result<void> check(int rc, std::string_view what);

/// An Error with the code libgit2's `rc` maps to (for callers that branch on rc first).
Error error_from(int rc, std::string_view what);

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};

/// Gives a handle from open_repo() back to its pool (repo_pool.cpp); frees any other.
void release_repo(git_repository* repo);

// Owning handles; nothing else in loopr calls a *_free function.
template <typename T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, Deleter<T, Free>>;
using RepoPtr = Owned<git_repository, release_repo>;
using IndexPtr = Owned<git_index, git_index_free>;
using TreePtr = Owned<git_tree, git_tree_free>;
using TreeEntryPtr = Owned<git_tree_entry, git_tree_entry_free>;
using BlobPtr = Owned<git_blob, git_blob_free>;
using CommitPtr = Owned<git_commit, git_commit_free>;
using RefPtr = Owned<git_reference, git_reference_free>;
using SignaturePtr = Owned<git_signature, git_signature_free>;
using WorktreePtr = Owned<git_worktree, git_worktree_free>;
using StatusListPtr = Owned<git_status_list, git_status_list_free>;
using DiffPtr = Owned<git_diff, git_diff_free>;
using DiffStatsPtr = Owned<git_diff_stats, git_diff_stats_free>;
using ObjectPtr = Owned<git_object, git_object_free>;
using RevwalkPtr = Owned<git_revwalk, git_revwalk_free>;
using RebasePtr = Owned<git_rebase, git_rebase_free>;
using AnnotatedPtr = Owned<git_annotated_commit, git_annotated_commit_free>;
using ConfigPtr = Owned<git_config, git_config_free>;
using ConflictIterPtr = Owned<git_index_conflict_iterator, git_index_conflict_iterator_free>;

/// A git_buf that is disposed of at scope exit.
struct Buf {
  git_buf buf = GIT_BUF_INIT;
  Buf() = default;
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() { git_buf_dispose(&buf); }
  std::string str() const { return buf.ptr ? std::string(buf.ptr, buf.size) : std::string(); }
};

/// A git_strarray filled by libgit2, disposed of at scope exit.
struct StrArray {
  git_strarray arr{nullptr, 0};
  StrArray() = default;
  StrArray(const StrArray&) = delete;
  StrArray& operator=(const StrArray&) = delete;
  ~StrArray() { git_strarray_dispose(&arr); }
};

/// Calls `fn(&raw, args...)` and wraps the result; the handle is owned even when fn fails after
/// setting it, so nothing leaks on an error path.
template <typename Ptr, typename Fn, typename... Args>
Result<Ptr> make(std::string_view what, Fn fn, Args&&... args) {
  typename Ptr::pointer raw = nullptr;
  int rc = fn(&raw, std::forward<Args>(args)...);
  Ptr owned(raw);
  if (rc < 0) return error_from(rc, what);
  return owned;
}

/// How to open: a work tree given exactly (a loop's worktree: never walk up into the user's main
/// repository by accident), or discovery from any folder inside a repository.
enum class OpenMode { exact, discover };

/// A git_repository for the calling thread alone: each operation opens its own and gives it back
/// before returning, which is what makes the git module thread-safe (see repository.hpp). An
/// exact open takes back a handle released moments ago (repo_pool.cpp) when every file the open
/// read (`.git`, the config files) is unchanged, with its index dropped: what a fresh open would
/// give, without the ~70 file calls of one.
Result<RepoPtr> open_repo(const std::filesystem::path& path, OpenMode mode);

/// How many times this process really opened a repository (git_repository_open_ext), for tests.
std::uint64_t repository_opens();

/// A git_repository kept open across operations for object-database work only: reading commits
/// and trees, walking history, writing objects. Each operation that opens a fresh repository
/// starts with an empty object cache, so a merge-base walk over the integration branch re-reads
/// (and re-inflates) every merge made before it: O(merges made) per merge, quadratic over a
/// plan. A kept handle keeps the parsed commits cached (libgit2 caches commits and trees up to
/// 4 KiB; GIT_OPT_SET_CACHE_MAX_SIZE bounds the total). Never use it for refs, the index, the
/// work tree or config: those stay with a fresh open_repo(), so nothing read from them is stale.
/// Objects are immutable and found by id, so a kept handle sees every object written since
/// (loose objects are looked up on disk; a miss in the pack list refreshes it).
///
/// The lease holds the handle's mutex: one thread uses a handle at a time (libgit2 handles are
/// not thread-safe). Handles are keyed by the work tree and the identity (device, inode) of its
/// object folder, so a repository deleted and made again at the same path gets a fresh one; a
/// few are kept, least recently used dropped first.
class ObjectRepoLease {
 public:
  git_repository* get() const { return repo_; }

 private:
  friend Result<ObjectRepoLease> lease_object_repo(const std::filesystem::path& root);
  std::shared_ptr<void> entry_;  // keeps the handle alive while leased
  std::unique_lock<std::mutex> lock_;
  git_repository* repo_ = nullptr;
};

/// Leases the kept handle of the repository whose main work tree is `root`, opening it first
/// if needed. Do not call with the lease of another repository held (one lease at a time).
Result<ObjectRepoLease> lease_object_repo(const std::filesystem::path& root);

/// git_merge_base(out, repo, a, b), the history walked on the kept object handle of the
/// repository `repo` belongs to (its main work tree or any linked one): the walk from an
/// integration tip back to a loop's fork visits every merge made since, and on a fresh handle
/// each of them is a loose object opened and inflated again (RESULTS.md, issue 47 item 2: 93 %
/// of the daemon's loose-object reads). The same return codes (GIT_ENOTFOUND: no common
/// history). An unusual layout (no `<root>/.git/objects`) walks on `repo` itself. Do not call
/// with a lease held.
int kept_merge_base(git_oid* out, git_repository* repo, const git_oid& a, const git_oid& b);

/// 40 hex digits.
std::string to_hex(const git_oid& id);
Result<git_oid> parse_oid(const std::string& hex);

/// `refs/heads/<branch>` after checking that `branch` is a valid branch name.
Result<std::string> branch_ref_name(const std::string& branch);

/// The commit a branch points at; not_found when there is no such branch.
Result<git_oid> branch_tip(git_repository* repo, const std::string& branch);

Result<CommitPtr> lookup_commit(git_repository* repo, const git_oid& id);
Result<TreePtr> commit_tree(git_repository* repo, const git_oid& commit_id);

/// The author/committer for commits loopr makes: user.name/user.email from the repository's git
/// config (local, global, XDG, system), each missing field falling back to `loopr` /
/// `loopr@localhost` so a machine without git identity still gets valid commits.
Result<SignaturePtr> default_signature(git_repository* repo);

/// The paths of every conflict in `index` (ours, else theirs, else ancestor path), sorted.
Result<std::vector<std::string>> conflict_paths(git_index* index);

/// `p` (a path libgit2 gives, often ending in '/') without trailing slashes; "" for null.
std::filesystem::path without_trailing_slash(const char* p);

/// `file` in each folder of libgit2's search path for a config level (GIT_CONFIG_LEVEL_GLOBAL,
/// _XDG, _SYSTEM), in its order: where libgit2 looks for that level's file; nullopt when libgit2
/// cannot say.
std::optional<std::vector<std::filesystem::path>> search_path_files(int level,
                                                                    std::string_view file);

/// The workdir of `repo` without a trailing slash.
std::filesystem::path workdir_of(git_repository* repo);

/// `.loopr/state/` etc. are loopr's own folders; a checkpoint never commits them even when a
/// repository forgot to ignore them (they may hold RocksDB files or nested worktrees).
bool is_loopr_private_path(std::string_view repo_relative_path);

}  // namespace loopr::git::detail
