#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <loopr/core/socket_pump.hpp>

namespace loopr {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd, data.data(), data.size());
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool read_http_head(int fd, std::string& data, std::size_t max) {
  char buf[4096];
  while (data.find("\r\n\r\n") == std::string::npos) {
    if (data.size() >= max) return false;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.append(buf, static_cast<std::size_t>(n));
  }
  return true;
}

void pump_both_ways(int a, int b, std::string_view a_first, const std::atomic<bool>* stop,
                    std::chrono::milliseconds idle) {
  if (!a_first.empty() && !write_all(b, a_first)) return;
  struct Direction {
    int from, to;
    bool open = true;
  } dirs[2] = {{a, b}, {b, a}};
  auto last = std::chrono::steady_clock::now();
  char buf[64 * 1024];
  while (dirs[0].open || dirs[1].open) {
    if (stop && stop->load()) return;
    pollfd fds[2];
    int n = 0;
    Direction* which[2];
    for (auto& d : dirs)
      if (d.open) {
        fds[n] = {d.from, POLLIN, 0};
        which[n++] = &d;
      }
    int ready = ::poll(fds, static_cast<nfds_t>(n), 200);
    if (ready < 0 && errno != EINTR) return;
    if (ready <= 0) {
      if (std::chrono::steady_clock::now() - last > idle) return;
      continue;
    }
    last = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      if (!fds[i].revents) continue;
      Direction& d = *which[i];
      ssize_t got = ::read(d.from, buf, sizeof buf);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        d.open = false;
        ::shutdown(d.to, SHUT_WR);
        if (got < 0) return;
        continue;
      }
      if (!write_all(d.to, std::string_view(buf, static_cast<std::size_t>(got)))) return;
    }
  }
}

}  // namespace loopr
