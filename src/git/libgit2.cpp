#include "git/libgit2.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <loopr/core/repo_paths.hpp>

namespace loopr::git::detail {

void ensure_libgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (git_libgit2_init() < 0) throw std::runtime_error("git_libgit2_init failed");
    // Strict object creation makes every tree written check that each entry's object exists:
    // one stat per file of the repository on every checkpoint (70 of 85 ms for 5,000 files,
    // measured by tools/bench/git_bench). Our trees come from an index whose blobs libgit2 has
    // just written or from trees already in the repository; `git fsck` in the tests checks it.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
    // The object caches of every open repository together (256 MiB by default): the kept
    // handles of lease_object_repo() live as long as the daemon, so their cache is bounded
    // below what a daemon should hold; commits are a few hundred bytes each.
    git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, static_cast<ssize_t>(64) << 20);
  });
}

std::unique_lock<std::mutex> lock_worktree_registry() {
  static std::mutex registry;
  return std::unique_lock<std::mutex>(registry);
}

namespace {

ErrorCode code_for(int rc, const git_error* e) {
  switch (rc) {
    case GIT_ENOTFOUND:
      return ErrorCode::not_found;
    case GIT_EEXISTS:
      return ErrorCode::already_exists;
    case GIT_ECONFLICT:
    case GIT_EMERGECONFLICT:
    case GIT_EMODIFIED:
    case GIT_ELOCKED:
    case GIT_EUNMERGED:
    case GIT_ENONFASTFORWARD:
    case GIT_EUNCOMMITTED:
    case GIT_EINDEXDIRTY:
      return ErrorCode::conflict;
    case GIT_EINVALIDSPEC:
    case GIT_EBAREREPO:
    case GIT_EUNBORNBRANCH:
    case GIT_EINVALID:
    case GIT_EAMBIGUOUS:
    case GIT_EOWNER:
      return ErrorCode::invalid_argument;
    case GIT_EUSER:
      return ErrorCode::cancelled;
    default:
      break;
  }
  if (e && (e->klass == GIT_ERROR_OS || e->klass == GIT_ERROR_FILESYSTEM)) return ErrorCode::io;
  return ErrorCode::internal;
}

}  // namespace

Error error_from(int rc, std::string_view what) {
  const git_error* e = git_error_last();
  std::string message(what);
  message += ": ";
  message += (e && e->message) ? e->message : "libgit2 error " + std::to_string(rc);
  return Error{code_for(rc, e), std::move(message)};
}

Result<void> check(int rc, std::string_view what) {
  if (rc >= 0) return ok();
  return error_from(rc, what);
}

namespace {

struct KeptRepo {
  std::filesystem::path root;
  dev_t dev = 0;
  ino_t ino = 0;
  std::mutex use;
  RepoPtr repo;
};

// Enough for a daemon (one repository) and a test process juggling a few at once.
constexpr std::size_t kKeptRepos = 4;

}  // namespace

Result<ObjectRepoLease> lease_object_repo(const std::filesystem::path& root) {
  ensure_libgit2();
  // The object folder's identity: a repository deleted and made again at the same path (tests
  // do) must not be served from the old one's handle (its pack list and cache).
  struct stat st {};
  std::filesystem::path objects = root / ".git" / "objects";
  if (::stat(objects.c_str(), &st) != 0) {
    // An unusual layout (a .git file, core.objectsDir…): no keeping, a handle of its own.
    st = {};
  }
  static std::mutex kept_mutex;
  static std::list<std::shared_ptr<KeptRepo>> kept;  // most recently used first
  std::shared_ptr<KeptRepo> entry;
  {
    std::lock_guard<std::mutex> guard(kept_mutex);
    for (auto it = kept.begin(); it != kept.end(); ++it) {
      if ((*it)->root == root && (*it)->dev == st.st_dev && (*it)->ino == st.st_ino &&
          st.st_ino != 0) {
        entry = *it;
        kept.splice(kept.begin(), kept, it);
        break;
      }
    }
    if (!entry) {
      entry = std::make_shared<KeptRepo>();
      entry->root = root;
      entry->dev = st.st_dev;
      entry->ino = st.st_ino;
      if (st.st_ino != 0) {
        // Drop stale handles of the same path, then the least recently used beyond the limit
        // (a leased one stays alive through its lease's shared_ptr).
        kept.remove_if([&](const auto& e) { return e->root == root; });
        kept.push_front(entry);
        while (kept.size() > kKeptRepos) kept.pop_back();
      }
    }
  }
  ObjectRepoLease lease;
  lease.lock_ = std::unique_lock<std::mutex>(entry->use);
  if (!entry->repo) {
    LOOPR_ASSIGN(entry->repo, open_repo(root, OpenMode::exact));
  }
  lease.repo_ = entry->repo.get();
  lease.entry_ = std::move(entry);
  return lease;
}

std::filesystem::path without_trailing_slash(const char* p) {
  std::string s = p ? p : "";
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::optional<std::vector<std::filesystem::path>> search_path_files(int level,
                                                                    std::string_view file) {
  std::vector<std::filesystem::path> files;
  Buf dirs;
  if (git_libgit2_opts(GIT_OPT_GET_SEARCH_PATH, level, &dirs.buf) != 0) return std::nullopt;
  std::string all = dirs.str();
  std::size_t start = 0;
  while (start <= all.size()) {
    std::size_t end = all.find(GIT_PATH_LIST_SEPARATOR, start);
    if (end == std::string::npos) end = all.size();
    if (end > start) files.push_back(std::filesystem::path(all.substr(start, end - start)) / file);
    start = end + 1;
  }
  return files;
}

int kept_merge_base(git_oid* out, git_repository* repo, const git_oid& a, const git_oid& b) {
  std::filesystem::path dir = without_trailing_slash(git_repository_commondir(repo));
  if (dir.filename() != ".git") return git_merge_base(out, repo, &a, &b);
  auto objects = lease_object_repo(dir.parent_path());
  if (!objects) return git_merge_base(out, repo, &a, &b);
  return git_merge_base(out, objects->get(), &a, &b);
}

std::string to_hex(const git_oid& id) {
  char buf[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(buf, sizeof buf, &id);
  return buf;
}

Result<git_oid> parse_oid(const std::string& hex) {
  git_oid id;
  if (hex.size() != GIT_OID_HEXSZ || git_oid_fromstr(&id, hex.c_str()) < 0) {
    return make_error(ErrorCode::invalid_argument, "not a full commit id: '" + hex + "'");
  }
  return id;
}

Result<std::string> branch_ref_name(const std::string& branch) {
  ensure_libgit2();
  int valid = 0;
  LOOPR_TRY(check(git_branch_name_is_valid(&valid, branch.c_str()), "checking branch name"));
  if (!valid)
    return make_error(ErrorCode::invalid_argument, "invalid branch name '" + branch + "'");
  return "refs/heads/" + branch;
}

Result<git_oid> branch_tip(git_repository* repo, const std::string& branch) {
  LOOPR_ASSIGN(std::string name, branch_ref_name(branch));
  git_oid id;
  int rc = git_reference_name_to_id(&id, repo, name.c_str());
  if (rc == GIT_ENOTFOUND) return make_error(ErrorCode::not_found, "no branch '" + branch + "'");
  LOOPR_TRY(check(rc, "resolving branch '" + branch + "'"));
  return id;
}

Result<CommitPtr> lookup_commit(git_repository* repo, const git_oid& id) {
  return make<CommitPtr>("looking up commit " + to_hex(id), git_commit_lookup, repo, &id);
}

Result<TreePtr> commit_tree(git_repository* repo, const git_oid& commit_id) {
  LOOPR_ASSIGN(CommitPtr commit, lookup_commit(repo, commit_id));
  return make<TreePtr>("reading the tree of " + to_hex(commit_id), git_commit_tree, commit.get());
}

namespace {

// One config value or `fallback` when unset/empty (a broken config file is still an error).
Result<std::string> config_string(git_config* config, const char* key, const char* fallback) {
  Buf value;
  int rc = git_config_get_string_buf(&value.buf, config, key);
  if (rc == GIT_ENOTFOUND) return std::string(fallback);
  LOOPR_TRY(check(rc, std::string("reading ") + key));
  std::string s = value.str();
  return s.empty() ? std::string(fallback) : s;
}

}  // namespace

Result<SignaturePtr> default_signature(git_repository* repo) {
  LOOPR_ASSIGN(ConfigPtr config,
               make<ConfigPtr>("reading git config", git_repository_config, repo));
  // A snapshot so name and email come from one consistent read of the config files.
  LOOPR_ASSIGN(ConfigPtr snap,
               make<ConfigPtr>("reading git config", git_config_snapshot, config.get()));
  LOOPR_ASSIGN(std::string name, config_string(snap.get(), "user.name", "loopr"));
  LOOPR_ASSIGN(std::string email, config_string(snap.get(), "user.email", "loopr@localhost"));
  return make<SignaturePtr>("making a signature for " + name + " <" + email + ">",
                            git_signature_now, name.c_str(), email.c_str());
}

Result<std::vector<std::string>> conflict_paths(git_index* index) {
  std::vector<std::string> paths;
  LOOPR_ASSIGN(ConflictIterPtr it,
               make<ConflictIterPtr>("listing conflicts", git_index_conflict_iterator_new, index));
  const git_index_entry* ancestor = nullptr;
  const git_index_entry* ours = nullptr;
  const git_index_entry* theirs = nullptr;
  int rc = 0;
  while ((rc = git_index_conflict_next(&ancestor, &ours, &theirs, it.get())) == 0) {
    const git_index_entry* e = ours ? ours : theirs ? theirs : ancestor;
    if (e) paths.emplace_back(e->path);
  }
  if (rc != GIT_ITEROVER) LOOPR_TRY(check(rc, "listing conflicts"));
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

std::filesystem::path workdir_of(git_repository* repo) {
  return without_trailing_slash(git_repository_workdir(repo));
}

bool is_loopr_private_path(std::string_view path) {
  for (std::string_view dir : kIgnoredDirs) {
    if (path.substr(0, dir.size()) == dir) return true;
    // A folder itself ("`.loopr/state`" without the slash) is private too.
    if (path.size() + 1 == dir.size() && dir.substr(0, path.size()) == path) return true;
  }
  return false;
}

}  // namespace loopr::git::detail
