#include "daemon/loop_event_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include <loopr/core/loop.hpp>
#include <loopr/core/text.hpp>

namespace loopr::daemon {

std::string loop_event_line(const Event& e) {
  std::string line = format_timestamp(e.time);
  line += " #";
  line += std::to_string(e.seq);
  line += ' ';
  line += e.type;
  line += ' ';
  line += json_text(e.data);
  line += '\n';
  return line;
}

void append_loop_event(const RepoPaths& paths, const Event& e) {
  if (e.loop_id.empty()) return;
  const std::filesystem::path dir = paths.loop_log_dir(e.loop_id);
  const std::filesystem::path file = dir / "events.log";
  constexpr int kFlags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC;
  int fd = ::open(file.c_str(), kFlags, 0666);
  if (fd < 0 && errno == ENOENT) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    fd = ::open(file.c_str(), kFlags, 0666);
  }
  if (fd < 0) return;
  const std::string line = loop_event_line(e);
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::close(fd);
}

}  // namespace loopr::daemon
