// Capped reads of regular files only, never through a symlink inside a folder the model writes
// (core/file_read.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <loopr/core/fd.hpp>
#include <loopr/core/file_read.hpp>

namespace loopr {

namespace {

FileBytes not_read(FileProblem why, std::string problem) {
  FileBytes f;
  f.why = why;
  f.problem = std::move(problem);
  return f;
}
FileBytes missing(std::string problem) {
  return not_read(FileProblem::missing, std::move(problem));
}
FileBytes refused(std::string problem) {
  return not_read(FileProblem::refused, std::move(problem));
}
FileBytes unreadable(std::string problem) {
  return not_read(FileProblem::unreadable, std::move(problem));
}

/// Up to `max_bytes` of the opened `fd` (named `shown` in problems), when it is a regular file.
FileBytes read_open(const Fd& fd, const std::string& shown, std::size_t max_bytes) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return unreadable("cannot read " + shown + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return refused(shown + " is not a regular file (a folder, FIFO, socket or device): not read");
  FileBytes f;
  std::string bytes;
  char chunk[64 * 1024];
  // One byte past the cap tells a file that is longer from one that is exactly the cap.
  const std::size_t limit = max_bytes == std::string::npos ? max_bytes : max_bytes + 1;
  while (bytes.size() < limit) {
    const std::size_t want = std::min(sizeof chunk, limit - bytes.size());
    const ssize_t got = ::read(fd.get(), chunk, want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return unreadable("cannot read " + shown + ": " + std::strerror(errno));
    if (got == 0) break;
    bytes.append(chunk, static_cast<std::size_t>(got));
  }
  if (bytes.size() > max_bytes) {
    bytes.resize(max_bytes);
    f.truncated = true;
  }
  f.bytes = std::move(bytes);
  return f;
}

/// `rel`'s components, `.` and empty ones left out.
std::vector<std::string> components(std::string_view rel) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= rel.size()) {
    std::size_t slash = rel.find('/', pos);
    if (slash == std::string_view::npos) slash = rel.size();
    std::string_view part = rel.substr(pos, slash - pos);
    if (!part.empty() && part != ".") out.emplace_back(part);
    pos = slash + 1;
  }
  return out;
}

constexpr int kReadFlags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

}  // namespace

bool is_inside_path(std::string_view rel) {
  if (rel.empty() || rel.front() == '/' || rel.find('\0') != std::string_view::npos) return false;
  auto parts = components(rel);
  if (parts.empty()) return false;
  for (const auto& p : parts)
    if (p == ".." || p == ".git") return false;
  return true;
}

FileBytes read_file_inside(const std::filesystem::path& root, std::string_view rel,
                           std::size_t max_bytes) {
  const std::string shown(rel);
  if (!is_inside_path(rel)) return refused(shown + " is not a path inside " + root.string());
  Fd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.ok()) return missing("cannot open " + root.string() + ": " + std::strerror(errno));
  const auto parts = components(rel);
  // Folder by folder: O_NOFOLLOW at each step, so a folder the model made a symlink leads
  // nowhere (a check of the whole path first and an open after could be raced).
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const int next =
        ::openat(dir.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      if (errno == ENOENT) return missing("no " + shown);
      if (errno == ELOOP || errno == ENOTDIR)
        return refused(shown + ": " + parts[i] +
                       " is a symbolic link or not a folder: not followed");
      return unreadable("cannot open " + shown + ": " + std::strerror(errno));
    }
    dir.reset(next);
  }
  return read_file_at(dir.get(), parts.back(), max_bytes, shown);
}

FileBytes read_file_at(int dir, const std::string& name, std::size_t max_bytes,
                       const std::string& shown) {
  if (dir < 0) return missing("no " + shown);
  Fd fd(::openat(dir, name.c_str(), kReadFlags | O_NOFOLLOW));
  if (!fd.ok()) {
    if (errno == ENOENT) return missing("no " + shown);
    if (errno == ELOOP) return refused(shown + " is a symbolic link: not followed");
    if (errno == ENXIO) return refused(shown + " is a socket: not read");
    return unreadable("cannot open " + shown + ": " + std::strerror(errno));
  }
  return read_open(fd, shown, max_bytes);
}

}  // namespace loopr
