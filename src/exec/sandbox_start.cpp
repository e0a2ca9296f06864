#include "exec/sandbox_start.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace loopr::exec {

namespace {

// N of `"child-pid": N` once the number is complete (a character follows it), else -1.
pid_t parse_child_pid(const std::string& text) {
  static const std::string key = "\"child-pid\":";
  auto at = text.find(key);
  if (at == std::string::npos) return -1;
  std::size_t i = at + key.size();
  while (i < text.size() && text[i] == ' ') ++i;
  std::size_t start = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == start || i == text.size()) return -1;
  long pid = std::strtol(text.c_str() + start, nullptr, 10);
  return pid > 0 ? static_cast<pid_t>(pid) : -1;
}

}  // namespace

pid_t read_child_pid(int fd, std::string& text, std::chrono::milliseconds limit) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + limit;
  char buf[1024];
  while (true) {
    if (pid_t pid = parse_child_pid(text); pid > 0) return pid;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) return -1;  // bubblewrap is gone
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return -1;
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
  }
}

bool join_groups(const std::vector<int>& fds, pid_t pid) {
  std::string text = std::to_string(pid);
  for (int fd : fds)
    if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) return false;
  return true;
}

bool write_whole(int fd, const std::string& data) {
  ssize_t n;
  do n = ::write(fd, data.data(), data.size());
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(data.size());
}

}  // namespace loopr::exec
