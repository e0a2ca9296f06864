// The walk goes by directory descriptors (openat, fstatat, unlinkat with O_NOFOLLOW): a name
// swapped for a symlink meanwhile leads nowhere outside the folder. Nothing but folders is
// opened, so a FIFO or a device is never read.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <atomic>

#include <loopr/core/sweep_handoff.hpp>
#include <loopr/core/worktree_sweep.hpp>

namespace loopr {
namespace {

constexpr int kMaxDepth = 256;
constexpr std::size_t kMaxNamed = 20;  // names listed per kind in `describe`
std::atomic<std::uint64_t> g_sweeps{0};

const char* kind_of(unsigned char type) {
  switch (type) {
    case DT_FIFO:
      return "a FIFO";
    case DT_SOCK:
      return "a socket";
    case DT_CHR:
      return "a character device";
    case DT_BLK:
      return "a block device";
    default:
      return "a special file";
  }
}

// unlinkat, and once more after making the folder writable for its owner (a model may leave a
// folder read-only around what it made).
bool remove_entry(int dirfd, const char* name) {
  if (::unlinkat(dirfd, name, 0) == 0) return true;
  if (errno != EACCES && errno != EPERM) return false;
  struct stat st {};
  if (::fstat(dirfd, &st) != 0 || ::fchmod(dirfd, (st.st_mode & 07777) | S_IRWXU) != 0)
    return false;
  return ::unlinkat(dirfd, name, 0) == 0;
}

// The files libgit2 reads from the work tree itself when it stages or diffs: it opens them
// through a symlink (where git itself no longer does), so a link to a FIFO anywhere on the host
// (another loop's worktree while its command runs, /run/initctl) would block the thread.
bool read_by_git(const char* name) {
  return std::strcmp(name, ".gitignore") == 0 || std::strcmp(name, ".gitattributes") == 0 ||
         std::strcmp(name, ".gitmodules") == 0;
}

// Whether the symlink at `root`/`rel` leads to a regular file inside `root` (itself swept, and
// nothing runs in the worktree after a sweep, so it stays one).
bool leads_to_a_file_inside(const std::string& root, const std::string& rel) {
  char* resolved = ::realpath((root + "/" + rel).c_str(), nullptr);
  if (resolved == nullptr) return false;
  std::string target = resolved;
  std::free(resolved);
  struct stat st {};
  return target.compare(0, root.size() + 1, root + "/") == 0 && ::stat(target.c_str(), &st) == 0 &&
         S_ISREG(st.st_mode);
}

void walk(int fd, const std::string& root, const std::string& prefix, SweepReport& report,
          int depth, const SweepVisitor* visit);

// One folder entry `name` (at `rel`) seen in the folder `dirfd`, and where the sweep is.
struct Entry {
  int dirfd;
  const char* name;
  const std::string& rel;
  SweepReport& report;
  const SweepVisitor* visit;
};

void sweep_folder(const Entry& e, const std::string& root, int depth) {
  if (depth >= kMaxDepth) {
    // Not looked into, so not known to be clean: git would go on reading there.
    e.report.failed.push_back(e.rel + " (a folder nested more than " + std::to_string(kMaxDepth) +
                              " deep): not checked");
    return;
  }
  int sub = ::openat(e.dirfd, e.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0) {
    // Not looked into: a caller that lists what is there cannot trust the list.
    if (e.visit) e.report.failed.push_back(e.rel + " (a folder): " + std::strerror(errno));
    return;
  }
  if (e.visit) (*e.visit)(e.rel, nullptr);
  walk(sub, root, e.rel + "/", e.report, depth + 1, e.visit);
}

void sweep_symlink(const Entry& e, const std::string& root, struct stat& st) {
  if (!read_by_git(e.name) || leads_to_a_file_inside(root, e.rel)) {
    if (e.visit && ::fstatat(e.dirfd, e.name, &st, AT_SYMLINK_NOFOLLOW) == 0)
      (*e.visit)(e.rel, &st);
    return;
  }
  if (remove_entry(e.dirfd, e.name))
    e.report.removed.push_back(e.rel +
                               " (a symlink to something outside the worktree or not a file)");
  else
    e.report.failed.push_back(e.rel +
                              " (a symlink git would read through): " + std::strerror(errno));
}

// A fifo, socket or device: nothing a repository holds.
void sweep_special(const Entry& e, unsigned char type) {
  if (remove_entry(e.dirfd, e.name))
    e.report.removed.push_back(e.rel + " (" + kind_of(type) + ")");
  else
    e.report.failed.push_back(e.rel + " (" + kind_of(type) + "): " + std::strerror(errno));
}

void sweep_regular(const Entry& e, struct stat& st) {
  if ((st.st_mode & (S_ISUID | S_ISGID)) == 0) {
    if (e.visit) (*e.visit)(e.rel, &st);
    return;
  }
  if (st.st_nlink > 1) {
    // Another name shares the inode (and so the bits): only this name goes.
    if (remove_entry(e.dirfd, e.name))
      e.report.removed.push_back(e.rel + " (a setuid/setgid file with another hard link)");
    else
      e.report.failed.push_back(e.rel + " (setuid/setgid): " + std::strerror(errno));
    return;
  }
  mode_t mode = st.st_mode & 07777 & ~static_cast<mode_t>(S_ISUID | S_ISGID);
  if (::fchmodat(e.dirfd, e.name, mode, 0) == 0) {
    e.report.stripped.push_back(e.rel);
    if (e.visit && ::fstatat(e.dirfd, e.name, &st, AT_SYMLINK_NOFOLLOW) == 0)
      (*e.visit)(e.rel, &st);
  } else
    e.report.failed.push_back(e.rel + " (setuid/setgid): " + std::strerror(errno));
}

void walk(int fd, const std::string& root, const std::string& prefix, SweepReport& report,
          int depth, const SweepVisitor* visit) {
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return;
  }
  while (dirent* d = ::readdir(dir)) {
    const char* name = d->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
    if (depth == 0 && std::strcmp(name, ".git") == 0) continue;
    std::string rel = prefix + name;
    unsigned char type = d->d_type;
    struct stat st {};
    if (type == DT_UNKNOWN || type == DT_REG) {
      if (::fstatat(::dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      type = static_cast<unsigned char>(IFTODT(st.st_mode));
    }
    Entry e{::dirfd(dir), name, rel, report, visit};
    switch (type) {
      case DT_DIR:
        sweep_folder(e, root, depth);
        break;
      case DT_LNK:
        sweep_symlink(e, root, st);
        break;
      case DT_FIFO:
      case DT_SOCK:
      case DT_CHR:
      case DT_BLK:
        sweep_special(e, type);
        break;
      case DT_REG:
        sweep_regular(e, st);
        break;
      default:
        break;
    }
  }
  ::closedir(dir);
}

std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kMaxNamed; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kMaxNamed) out += " and " + std::to_string(names.size() - kMaxNamed) + " more";
  return out;
}

}  // namespace

std::uint64_t worktree_sweeps() { return g_sweeps.load(std::memory_order_relaxed); }

SweepReport sweep_worktree(const std::filesystem::path& root, const SweepVisitor* visit) {
  g_sweeps.fetch_add(1, std::memory_order_relaxed);
  SweepReport report;
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return report;
  char* real = ::realpath(root.c_str(), nullptr);
  std::string real_root = real != nullptr ? real : root.string();
  std::free(real);
  walk(fd, real_root, "", report, 0, visit);
  return report;
}

std::string describe(const SweepReport& r) {
  std::string out;
  if (!r.removed.empty())
    out +=
        "[loopr: removed from the worktree (only regular files, folders and symlinks are kept): " +
        list(r.removed) + "]\n";
  if (!r.stripped.empty())
    out += "[loopr: cleared the setuid/setgid bits of " + list(r.stripped) + "]\n";
  if (!r.failed.empty()) out += "[loopr: could not remove or clear " + list(r.failed) + "]\n";
  return out;
}

}  // namespace loopr
