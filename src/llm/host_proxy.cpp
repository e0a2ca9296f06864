// One thread accepts; each connection is served on a thread of its own (a CLI session holds a
// few connections at a time), so no pool thread of the daemon ever waits on the network here.
#include "llm/host_proxy.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <loopr/core/socket_pump.hpp>
#include <loopr/core/text.hpp>

namespace loopr::llm {
namespace {

constexpr int kConnectTimeoutMs = 10'000;

void answer(int fd, const std::string& status, const std::string& text) {
  write_all(fd, "HTTP/1.1 " + status + "\r\nContent-Type: text/plain\r\nContent-Length: " +
                    std::to_string(text.size()) + "\r\nConnection: close\r\n\r\n" + text);
}

// A TCP connection to host:port (nonblocking connect under a timeout), or -1.
int connect_to(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof err;
      if (::poll(&p, 1, kConnectTimeoutMs) == 1 &&
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        break;
      }
    }
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  return fd;
}

// `host[:port]` (IPv6 in brackets) split; `port` stays `default_port` when none is given.
void split_host(std::string_view authority, std::string& host, std::string& port,
                const std::string& default_port) {
  port = default_port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    host = std::string(
        authority.substr(1, close == std::string_view::npos ? authority.npos : close - 1));
    if (close != std::string_view::npos && close + 1 < authority.size() &&
        authority[close + 1] == ':')
      port = std::string(authority.substr(close + 2));
    return;
  }
  auto colon = authority.rfind(':');
  host = std::string(authority.substr(0, colon));
  if (colon != std::string_view::npos) port = std::string(authority.substr(colon + 1));
}

// The head of an absolute-form request made origin-form, with `Connection: close` (one request
// per connection: the next one may name another host).
std::string origin_form_head(std::string_view head, const std::string& method,
                             const std::string& path, const std::string& version) {
  std::string out = method + " " + path + " " + version + "\r\n";
  std::size_t pos = head.find("\r\n") + 2;
  while (pos < head.size()) {
    std::size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos || end == pos) break;
    std::string_view line = head.substr(pos, end - pos);
    std::string lower(line.substr(0, line.find(':')));
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (lower != "connection" && lower != "proxy-connection" && lower != "proxy-authorization" &&
        lower != "keep-alive")
      out.append(line).append("\r\n");
    pos = end + 2;
  }
  return out + "Connection: close\r\n\r\n";
}

void serve(int client, std::shared_ptr<HostProxy::Shared> shared) {
  std::string data;
  if (!read_http_head(client, data)) {
    ::close(client);
    return;
  }
  std::size_t head_end = data.find("\r\n\r\n") + 4;
  std::string_view head(data.data(), head_end);
  std::string_view line = head.substr(0, head.find("\r\n"));
  std::size_t s1 = line.find(' '), s2 = line.rfind(' ');
  std::string method(line.substr(0, s1));
  std::string target(s1 == line.npos || s2 <= s1 ? "" : line.substr(s1 + 1, s2 - s1 - 1));
  std::string version(s2 == line.npos ? "" : line.substr(s2 + 1));
  std::string host, port, path;
  bool tunnel = method == "CONNECT";
  if (tunnel) {
    split_host(target, host, port, "");
  } else if (target.rfind("http://", 0) == 0) {
    std::string rest = target.substr(7);
    auto slash = rest.find('/');
    split_host(std::string_view(rest).substr(0, slash), host, port, "80");
    path = slash == std::string::npos ? "/" : rest.substr(slash);
  }
  std::string where = host.empty() ? "" : host_port(host, port);
  if (where.empty() || port.empty() || !shared->allowed.count(where)) {
    ++shared->refused;
    std::string shown = terminal_text(where.empty() ? std::string(line) : where, 200);
    spdlog::warn("{} CLI network: refused {} (not an allowed host; llm.{}.allowed_hosts)",
                 shared->cli, shown, shared->config_key);
    answer(client, "403 Forbidden",
           "loopr: " + shown + " is not an allowed host for the " + shared->cli + " CLI (llm." +
               shared->config_key + ".allowed_hosts)\n");
    ::close(client);
    return;
  }
  int upstream = connect_to(host, port);
  if (upstream < 0) {
    answer(client, "502 Bad Gateway", "loopr: cannot connect to " + where + "\n");
    ::close(client);
    return;
  }
  if (tunnel) {
    write_all(client, "HTTP/1.1 200 Connection established\r\n\r\n");
    pump_both_ways(client, upstream, std::string_view(data).substr(head_end), &shared->stop);
  } else {
    std::string first = origin_form_head(head, method, path, version) + data.substr(head_end);
    pump_both_ways(client, upstream, first, &shared->stop);
  }
  ::close(upstream);
  ::close(client);
}

}  // namespace

std::string host_port(std::string host, const std::string& port) {
  std::transform(host.begin(), host.end(), host.begin(), ::tolower);
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return host + ":" + port;
}

Result<std::unique_ptr<HostProxy>> HostProxy::start(std::filesystem::path path,
                                                    std::set<std::string> allowed, std::string cli,
                                                    std::string config_key) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.native().size() >= sizeof addr.sun_path)
    return make_error(ErrorCode::invalid_argument,
                      "the proxy socket path " + path.string() + " is too long");
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  ::unlink(path.c_str());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  mode_t old = ::umask(077);
  bool bound = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::umask(old);
  if (!bound || ::listen(fd, 64) != 0) {
    std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return make_error(ErrorCode::io, "cannot listen on " + path.string() + ": " + why);
  }
  auto shared = std::make_shared<Shared>();
  shared->allowed = std::move(allowed);
  shared->cli = std::move(cli);
  shared->config_key = std::move(config_key);
  return std::make_unique<HostProxy>(Key{}, std::move(path), fd, std::move(shared));
}

HostProxy::HostProxy(Key, std::filesystem::path path, int fd, std::shared_ptr<Shared> shared)
    : path_(std::move(path)), fd_(fd), shared_(std::move(shared)) {
  acceptor_ = std::thread([this] { accept_loop(); });
}

HostProxy::~HostProxy() {
  shared_->stop = true;
  if (acceptor_.joinable()) acceptor_.join();
  ::close(fd_);
  ::unlink(path_.c_str());
}

void HostProxy::accept_loop() {
  while (!shared_->stop.load()) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::thread([client, shared = shared_] { serve(client, shared); }).detach();
  }
}

}  // namespace loopr::llm
