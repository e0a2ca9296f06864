// open_repo(): repository handles reused while what a fresh open would read is unchanged.
//
// An open reads the work tree's `.git`, the worktree's commondir, git's config files (system,
// global, XDG, the repository's: each stat'ed three times), checks ownership and the format:
// ~70 file calls and a config parse, ~13 times per daemon iteration (RESULTS.md, issue 47 item 2:
// a quarter of the daemon's file calls, 12.6 % of its CPU at 100 loops). A released handle waits
// here a short while; the next open of the same path takes it back after checking, with ~8
// calls, that each file the open read is the one it read then.
//
// A handle taken back is what a fresh open would give: its paths came from the same `.git`
// content and commondir; its config is the same files (libgit2 also re-reads a changed file
// at each read; the stamps here guard what it caches per handle, core.* settings); its index is
// dropped at release, so the next use reads the index file again; refs are read from disk at each
// lookup (packed-refs when its stamp changes); objects are immutable. One thread uses a handle at
// a time: released handles are in this pool, lent ones in no one else's hands.
#include <fcntl.h>
#include <git2/sys/repository.h>
#include <sys/stat.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <loopr/core/fd.hpp>
#include <loopr/core/file_read.hpp>

#include "git/libgit2.hpp"

namespace loopr::git::detail {

namespace {

using Clock = std::chrono::steady_clock;

// How long a released handle waits, and how many wait: a daemon's iteration reopens the same
// few paths within milliseconds; an idle handle holds its object cache and pack files.
constexpr auto kIdleFor = std::chrono::seconds(2);
constexpr std::size_t kIdlePerPath = 4;
constexpr std::size_t kIdleTotal = 24;

// What identifies a file's version: a write, a rename over it or a new file at the path changes
// one of these (ctime moves on every change to the inode).
struct Stamp {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  uid_t uid = 0;
  mode_t mode = 0;
  off_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const Stamp&) const = default;
};

std::int64_t ns(const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

Stamp stamp_of(const std::string& path, bool follow) {
  struct stat st {};
  Stamp s;
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return s;
  s = {true,       st.st_dev,  st.st_ino,      st.st_uid,
       st.st_mode, st.st_size, ns(st.st_mtim), ns(st.st_ctim)};
  return s;
}

// A folder's identity only: its times move whenever an entry in it changes (`.git/` gains
// index.lock and ORIG_HEAD all the time).
Stamp identity_of(const std::string& path) {
  Stamp s = stamp_of(path, false);
  s.size = 0;
  s.mtime_ns = s.ctime_ns = 0;
  return s;
}

// A work tree's `.git` file, through the one reader of files a model may write: a FIFO or a
// symlink put there is neither waited on nor followed (its stamp alone then tells it apart).
std::string dot_git_text(const std::string& tree) {
  Fd dir(::open(tree.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  FileBytes read = read_file_at(dir.get(), ".git", 4096, ".git");
  return read.bytes.value_or("");
}

// Everything an open of `path` reads that could make its handle differ, as it is now.
struct Seen {
  Stamp tree;            // the work tree folder itself
  Stamp dot_git;         // `.git`: a folder (identity) or a file (stamp and text)
  std::string dot_text;  // a `.git` file's text: where the worktree's git folder is
  std::vector<std::pair<std::string, Stamp>> configs;
  bool operator==(const Seen&) const = default;
};

Seen look(const std::string& path, const std::vector<std::string>& config_files) {
  Seen s;
  s.tree = identity_of(path);
  std::string dot = path + "/.git";
  Stamp dot_stamp = stamp_of(dot, false);
  if (S_ISDIR(dot_stamp.mode)) {
    s.dot_git = identity_of(dot);
  } else {
    s.dot_git = dot_stamp;
    if (S_ISREG(dot_stamp.mode)) s.dot_text = dot_git_text(path);
  }
  s.configs.reserve(config_files.size());
  for (const std::string& f : config_files) s.configs.emplace_back(f, stamp_of(f, true));
  return s;
}

// The config files a handle of `repo` reads: the repository's (and a worktree's own), then
// the global, XDG and system ones libgit2 would look for now; nullopt if its search path is
// unknown (such a handle is used once, not kept).
std::optional<std::vector<std::string>> config_files_of(git_repository* repo) {
  std::vector<std::string> files;
  if (const char* common = git_repository_commondir(repo))
    files.push_back(std::string(common) + "/config");
  if (const char* own = git_repository_path(repo))
    files.push_back(std::string(own) + "/config.worktree");
  for (auto [level, name] :
       {std::pair{GIT_CONFIG_LEVEL_GLOBAL, ".gitconfig"}, std::pair{GIT_CONFIG_LEVEL_XDG, "config"},
        std::pair{GIT_CONFIG_LEVEL_SYSTEM, "gitconfig"}})
    if (auto found = search_path_files(level, name))
      for (const auto& file : *found) files.push_back(file.string());
    else
      return std::nullopt;
  return files;
}

std::int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return ns(t);
}

// Whether a config file may have changed since `started` (the config files are known, so
// stamped, only once the open has read them): the kernel's file times are coarse (a clock tick,
// up to 10 ms behind), so a change that close to the open counts as one, as git's "racily
// clean" index entries do; such a handle is used once and not kept.
bool changed_since(const Seen& seen, std::int64_t started) {
  constexpr std::int64_t kTick = 20'000'000;
  for (const auto& [file, s] : seen.configs)
    if (s.exists && (s.ctime_ns >= started - kTick || s.mtime_ns >= started - kTick)) return true;
  return false;
}

struct Entry {
  std::string path;
  Seen seen;
  std::vector<std::string> config_files;
  git_repository* repo = nullptr;
  Clock::time_point idle_since;
};

struct Pool {
  std::mutex mutex;
  std::list<Entry> idle;                            // most recently released first
  std::unordered_map<git_repository*, Entry> lent;  // handles in use, with what they saw
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: handles may be released during static teardown
  return *p;
}

std::atomic<std::uint64_t> opens{0};

// Takes the idle entries that must go (too old, too many) out of the pool; frees them after.
std::vector<git_repository*> trim(Pool& p, Clock::time_point now) {
  std::vector<git_repository*> drop;
  std::unordered_map<std::string, std::size_t> per_path;
  std::size_t kept = 0;
  for (auto it = p.idle.begin(); it != p.idle.end();) {
    std::size_t& n = per_path[it->path];
    if (now - it->idle_since > kIdleFor || n >= kIdlePerPath || kept >= kIdleTotal) {
      drop.push_back(it->repo);
      it = p.idle.erase(it);
    } else {
      ++n;
      ++kept;
      ++it;
    }
  }
  return drop;
}

void free_all(const std::vector<git_repository*>& repos) {
  for (git_repository* r : repos) git_repository_free(r);
}

Result<RepoPtr> open_fresh(const std::filesystem::path& path, OpenMode mode) {
  unsigned flags = mode == OpenMode::exact ? GIT_REPOSITORY_OPEN_NO_SEARCH : 0;
  git_repository* raw = nullptr;
  opens.fetch_add(1, std::memory_order_relaxed);
  int rc = git_repository_open_ext(&raw, path.c_str(), flags, nullptr);
  RepoPtr repo(raw);
  if (rc == GIT_ENOTFOUND) {
    return make_error(ErrorCode::not_found, mode == OpenMode::exact
                                                ? path.string() + " is not a git work tree"
                                                : "no git repository at or above " + path.string());
  }
  LOOPR_TRY(check(rc, "opening " + path.string()));
  return repo;
}

}  // namespace

void release_repo(git_repository* repo) {
  if (!repo) return;
  Pool& p = pool();
  Entry entry;
  {
    std::lock_guard<std::mutex> guard(p.mutex);
    auto it = p.lent.find(repo);
    if (it != p.lent.end()) {
      entry = std::move(it->second);
      p.lent.erase(it);
    }
  }
  if (!entry.repo) {
    git_repository_free(repo);  // not the pool's (opened some other way): freed as before
    return;
  }
  // The next user reads the index file again, and .gitattributes files, as a fresh handle
  // would; what was staged in memory and never written is not handed on.
  git_repository_set_index(repo, nullptr);
  git_attr_cache_flush(repo);
  std::vector<git_repository*> drop;
  {
    std::lock_guard<std::mutex> guard(p.mutex);
    entry.idle_since = Clock::now();
    p.idle.push_front(std::move(entry));
    drop = trim(p, p.idle.front().idle_since);
  }
  free_all(drop);
}

std::uint64_t repository_opens() { return opens.load(std::memory_order_relaxed); }

Result<RepoPtr> open_repo(const std::filesystem::path& path, OpenMode mode) {
  ensure_libgit2();
  if (mode != OpenMode::exact) return open_fresh(path, mode);
  const std::string key = path.string();
  Pool& p = pool();
  for (;;) {
    Entry entry;
    std::vector<git_repository*> drop;
    {
      std::lock_guard<std::mutex> guard(p.mutex);
      drop = trim(p, Clock::now());
      for (auto it = p.idle.begin(); it != p.idle.end(); ++it) {
        if (it->path == key) {
          entry = std::move(*it);
          p.idle.erase(it);
          break;
        }
      }
    }
    free_all(drop);
    if (!entry.repo) break;
    if (look(key, entry.config_files) == entry.seen) {
      git_repository* repo = entry.repo;
      std::lock_guard<std::mutex> guard(p.mutex);
      p.lent.emplace(repo, std::move(entry));
      return RepoPtr(repo);
    }
    git_repository_free(entry.repo);  // something it read changed: a fresh open reads it again
  }
  // What the open is about to read, looked at first: a change after this makes the handle fail
  // its check next time rather than pass with what it read before the change.
  Entry entry;
  entry.path = key;
  const std::int64_t started = now_ns();
  Seen before = look(key, {});
  LOOPR_ASSIGN(RepoPtr repo, open_fresh(path, mode));
  auto config_files = config_files_of(repo.get());
  if (!config_files) return repo;
  entry.config_files = std::move(*config_files);
  entry.seen = look(key, entry.config_files);
  if (entry.seen.tree != before.tree || entry.seen.dot_git != before.dot_git ||
      entry.seen.dot_text != before.dot_text || changed_since(entry.seen, started)) {
    return repo;  // it changed while being opened: used once, then freed (not in `lent`)
  }
  entry.repo = repo.get();
  std::lock_guard<std::mutex> guard(p.mutex);
  p.lent.emplace(entry.repo, std::move(entry));
  return repo;
}

}  // namespace loopr::git::detail
