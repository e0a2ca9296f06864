// A tiny blocking HTTP/1.1 client over loopback TCP for the web UI's tests: one request per
// connection (`Connection: close`), every header as given (a test can send a foreign Host or
// Origin, or none), the answer read until the server closes or `max_bytes` arrive.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace loopr::testing {

struct TcpAnswer {
  int status = 0;                              ///< 0: no answer (refused, cut)
  std::map<std::string, std::string> headers;  ///< names in lower case
  std::string body;                            ///< as sent (chunks not decoded)
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

/// `head` is the request line and header lines without the final blank line; `body` is sent
/// with a Content-Length.
inline TcpAnswer tcp_request(int port, std::string head, const std::string& body = {},
                             std::chrono::milliseconds timeout = std::chrono::seconds(20),
                             std::size_t max_bytes = 8 << 20) {
  TcpAnswer out;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return out;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return out;
  }
  head += "\r\nConnection: close\r\n";
  if (!body.empty() || head.rfind("POST", 0) == 0)
    head += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  head += "\r\n" + body;
  for (std::size_t sent = 0; sent < head.size();) {
    ssize_t n = ::send(fd, head.data() + sent, head.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string raw;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[8192];
  while (raw.size() < max_bytes) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  auto end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || end == std::string::npos) return out;
  out.status = std::stoi(raw.substr(9, 3));
  std::size_t pos = raw.find("\r\n") + 2;
  while (pos < end) {
    std::size_t eol = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, eol - pos);
    auto colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      out.headers[name] = value;
    }
    pos = eol + 2;
  }
  out.body = raw.substr(end + 4);
  return out;
}

}  // namespace loopr::testing
