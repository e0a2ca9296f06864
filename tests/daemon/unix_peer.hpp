// A raw Unix-socket peer for the transport tests: speaks bytes, not HTTP, so the tests can send
// garbage, half requests and huge bodies, and watch when the server hangs up.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>

#include "support/unix_socket.hpp"

namespace loopr::testing {

class UnixPeer {
 public:
  /// Connects (blocking) to `path`; ok() is false if that failed.
  explicit UnixPeer(const std::filesystem::path& path) {
    fd_ = connect_unix(path);
    if (fd_ >= 0) ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  }
  UnixPeer(UnixPeer&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UnixPeer& operator=(UnixPeer&&) = delete;
  ~UnixPeer() { close(); }

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  /// Sends what fits before `timeout`; returns the bytes sent, stops at EPIPE/ECONNRESET.
  std::size_t send(std::string_view bytes,
                   std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (!wait(POLLOUT, deadline)) break;
        continue;
      }
      send_failed_ = true;
      break;
    }
    return sent;
  }
  bool send_failed() const { return send_failed_; }

  /// Reads until `done(received)` is true, EOF, or `timeout`.
  template <typename Done>
  std::string read_until(Done done, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string got;
    char buf[16384];
    eof_ = false;
    while (!done(got)) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        got.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        eof_ = true;
        break;
      }
      if (!wait(POLLIN, deadline)) break;
    }
    return got;
  }
  /// Reads everything until the server closes (or `timeout`).
  std::string read_to_eof(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    return read_until([](const std::string&) { return false; }, timeout);
  }
  /// True if the last read ended because the server closed the connection.
  bool saw_eof() const { return eof_; }

 private:
  bool wait(short events, std::chrono::steady_clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return false;
    pollfd p{fd_, events, 0};
    return ::poll(&p, 1, static_cast<int>(left)) > 0;
  }

  int fd_ = -1;
  bool send_failed_ = false;
  bool eof_ = false;
};

/// True once `text` holds a complete response with a Content-Length body.
inline bool has_full_response(const std::string& text) {
  auto head_end = text.find("\r\n\r\n");
  if (head_end == std::string::npos) return false;
  auto cl = text.find("Content-Length: ");
  if (cl == std::string::npos || cl > head_end) return true;
  std::size_t length = std::stoul(text.substr(cl + 16));
  return text.size() >= head_end + 4 + length;
}

/// How many complete responses with a Content-Length body `text` holds.
inline int count_responses(std::string text) {
  int n = 0;
  while (has_full_response(text)) {
    auto head_end = text.find("\r\n\r\n");
    auto cl = text.find("Content-Length: ");
    std::size_t length =
        cl != std::string::npos && cl < head_end ? std::stoul(text.substr(cl + 16)) : 0;
    text.erase(0, head_end + 4 + length);
    ++n;
  }
  return n;
}

}  // namespace loopr::testing
