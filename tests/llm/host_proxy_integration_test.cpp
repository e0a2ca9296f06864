// The claude CLI's allowlisting proxy on real sockets: a CONNECT tunnel to an allowed host
// carries bytes both ways, an absolute-form request is passed on in origin form, and every
// other host is refused with 403.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <thread>

#include <loopr/core/socket_pump.hpp>

#include "llm/host_proxy.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::llm;

namespace {

// A TCP server on loopback that answers one connection: it records what it read (up to a
// blank line) and sends `reply`.
class Upstream {
 public:
  explicit Upstream(std::string reply) : reply_(std::move(reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 4);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      read_http_head(c, seen_);
      write_all(c, reply_);
      ::close(c);
    });
  }
  ~Upstream() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  const std::string& seen() const { return seen_; }

 private:
  int fd_ = -1, port_ = 0;
  std::string reply_, seen_;
  std::thread thread_;
};

// Sends `request` to the proxy's socket and reads until the proxy closes.
std::string through_proxy(const std::filesystem::path& socket, const std::string& request) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", socket.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return "no connection";
  write_all(fd, request);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

}  // namespace

TEST(HostProxy, TunnelsToAnAllowedHostAndRefusesEveryOther) {
  loopr::testing::TempDir dir("loopr-proxy");
  Upstream allowed("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  Upstream other("never");
  std::string allowed_host = host_port("127.0.0.1", std::to_string(allowed.port()));
  auto proxy = HostProxy::start(dir.path() / "p.sock", {allowed_host});
  ASSERT_TRUE(proxy.ok()) << proxy.error().message;

  // CONNECT, then the request inside the tunnel (bytes sent with the CONNECT head included).
  std::string tunnel =
      through_proxy((*proxy)->path(), "CONNECT " + allowed_host +
                                          " HTTP/1.1\r\nHost: x\r\n\r\n"
                                          "GET /inside HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_EQ(tunnel.rfind("HTTP/1.1 200 Connection established\r\n\r\n", 0), 0u) << tunnel;
  EXPECT_NE(tunnel.find("\r\n\r\nok"), std::string::npos) << tunnel;

  // Another host: refused, never connected to.
  std::string refused = through_proxy(
      (*proxy)->path(), "CONNECT 127.0.0.1:" + std::to_string(other.port()) + " HTTP/1.1\r\n\r\n");
  EXPECT_EQ(refused.rfind("HTTP/1.1 403", 0), 0u) << refused;
  EXPECT_NE(refused.find("allowed_hosts"), std::string::npos);
  std::string plain = through_proxy(
      (*proxy)->path(), "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n");
  EXPECT_EQ(plain.rfind("HTTP/1.1 403", 0), 0u) << plain;
  std::string junk = through_proxy((*proxy)->path(), "hello\r\n\r\n");
  EXPECT_EQ(junk.rfind("HTTP/1.1 403", 0), 0u) << junk;
  EXPECT_EQ((*proxy)->refused(), 3);
}

TEST(HostProxy, PassesAnAbsoluteFormRequestOnInOriginForm) {
  loopr::testing::TempDir dir("loopr-proxy");
  Upstream api("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
  std::string where = host_port("127.0.0.1", std::to_string(api.port()));
  auto proxy = HostProxy::start(dir.path() / "p.sock", {where});
  ASSERT_TRUE(proxy.ok()) << proxy.error().message;
  std::string answer = through_proxy(
      (*proxy)->path(), "POST http://" + where + "/v1/messages HTTP/1.1\r\nHost: " + where +
                            "\r\nProxy-Connection: keep-alive\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.1 404", 0), 0u) << answer;
  EXPECT_EQ(api.seen().rfind("POST /v1/messages HTTP/1.1\r\n", 0), 0u) << api.seen();
  EXPECT_NE(api.seen().find("Connection: close"), std::string::npos) << api.seen();
  EXPECT_EQ(api.seen().find("Proxy-Connection"), std::string::npos) << api.seen();
}

TEST(HostProxy, HostsCompareWithoutCaseAndIpv6InBrackets) {
  EXPECT_EQ(host_port("API.Anthropic.com", "443"), "api.anthropic.com:443");
  EXPECT_EQ(host_port("::1", "8080"), "[::1]:8080");
}
