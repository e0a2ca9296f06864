// A deliberately small, independent HTTP/1.1 client for mock-llm's integration tests: blocking
// POSIX sockets (+ OpenSSL for HTTPS), chunked and Content-Length bodies, keep-alive, and a
// flag telling whether the whole response arrived (so cut streams are visible). It shares no
// code with the server, so the server's framing is checked by a second implementation.
// Also: an SSE splitter, deliberately its own (a second implementation checks the server's
// framing), and the process handle for tests that run the real binary.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

namespace loopr::mock_llm::testing {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  ///< lower-case names
  std::string body;                            ///< de-chunked
  bool complete = false;   ///< the whole message arrived (false: cut, timed out, refused)
  bool timed_out = false;  ///< the read timeout passed before the end
  std::string error;       ///< why the request failed, if it did
  /// When each body piece arrived (for streams: to see events spread over time).
  std::vector<Clock::time_point> piece_times;

  Json json() const { return Json::parse(body); }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

struct SseEvent {
  std::string event;  ///< empty for OpenAI `data:`-only events
  std::string data;
};

/// Splits an SSE body into events (`event:` / `data:` lines, blank-line separated).
inline std::vector<SseEvent> parse_sse(const std::string& body) {
  std::vector<SseEvent> out;
  SseEvent cur;
  bool any = false;
  std::size_t pos = 0;
  while (pos < body.size()) {
    std::size_t end = body.find('\n', pos);
    if (end == std::string::npos) end = body.size();
    std::string line = body.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    pos = end + 1;
    if (line.empty()) {
      if (any) out.push_back(cur);
      cur = {};
      any = false;
    } else if (line.rfind("event: ", 0) == 0) {
      cur.event = line.substr(7);
      any = true;
    } else if (line.rfind("data: ", 0) == 0) {
      cur.data += (cur.data.empty() ? "" : "\n") + line.substr(6);
      any = true;
    }
  }
  if (any) out.push_back(cur);
  return out;
}

/// One client connection (HTTP, or HTTPS when `ca_file` is given) to 127.0.0.1:`port`.
class TestConnection {
 public:
  explicit TestConnection(std::uint16_t port, std::string ca_file = "",
                          std::string host_name = "localhost") {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      error_ = "connect failed";
      return;
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    set_timeout(std::chrono::seconds(20));
    if (ca_file.empty()) return;
    ctx_.reset(SSL_CTX_new(TLS_client_method()));
    SSL_CTX_set_verify(ctx_.get(), SSL_VERIFY_PEER, nullptr);
    if (SSL_CTX_load_verify_locations(ctx_.get(), ca_file.c_str(), nullptr) != 1) {
      error_ = "cannot load " + ca_file;
      return;
    }
    ssl_.reset(SSL_new(ctx_.get()));
    SSL_set_fd(ssl_.get(), fd_);
    SSL_set_tlsext_host_name(ssl_.get(), host_name.c_str());
    SSL_set1_host(ssl_.get(), host_name.c_str());
    if (SSL_connect(ssl_.get()) != 1) {
      char buf[256];
      ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
      error_ = std::string("TLS handshake failed: ") + buf;
    }
  }
  ~TestConnection() {
    ssl_.reset();
    if (fd_ >= 0) ::close(fd_);
  }
  TestConnection(const TestConnection&) = delete;
  TestConnection& operator=(const TestConnection&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  void set_timeout(std::chrono::milliseconds t) {
    timeval tv{static_cast<time_t>(t.count() / 1000),
               static_cast<suseconds_t>(t.count() % 1000 * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }

  /// Sends a request and reads its response (to the end, the close, or the timeout).
  HttpResponse request(const std::string& method, const std::string& path,
                       const std::map<std::string, std::string>& headers, const std::string& body) {
    HttpResponse r;
    if (!ok()) {
      r.error = error_;
      return r;
    }
    std::string out = method + " " + path + " HTTP/1.1\r\nhost: localhost\r\n";
    for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
    out += "content-length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    if (!write_all(out)) {
      r.error = "write failed";
      return r;
    }
    read_response(r);
    return r;
  }

 private:
  struct SslFree {
    void operator()(SSL* s) const { SSL_free(s); }
    void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
  };

  bool write_all(const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
      long n = ssl_
                   ? SSL_write(ssl_.get(), data.data() + sent, static_cast<int>(data.size() - sent))
                   : ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  /// Reads more bytes into buf_; false at EOF, error or timeout (timed_out set).
  bool fill(HttpResponse& r) {
    char tmp[16384];
    long n = ssl_ ? SSL_read(ssl_.get(), tmp, sizeof tmp) : ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) r.timed_out = true;
      return false;
    }
    buf_.append(tmp, static_cast<std::size_t>(n));
    return true;
  }

  void read_response(HttpResponse& r) {
    for (;;) {
      std::size_t end;
      while ((end = buf_.find("\r\n\r\n")) == std::string::npos)
        if (!fill(r)) return;
      std::string head = buf_.substr(0, end);
      buf_.erase(0, end + 4);
      std::size_t line_end = head.find("\r\n");
      std::string status_line = head.substr(0, line_end);
      r.status = std::stoi(status_line.substr(9, 3));
      r.headers.clear();
      std::size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
      while (pos < head.size()) {
        std::size_t e = head.find("\r\n", pos);
        if (e == std::string::npos) e = head.size();
        std::string line = head.substr(pos, e - pos);
        std::size_t colon = line.find(':');
        std::string name = line.substr(0, colon);
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::size_t v = colon + 1;
        while (v < line.size() && line[v] == ' ') ++v;
        r.headers[name] = line.substr(v);
        pos = e + 2;
      }
      if (r.status == 100) continue;  // interim response; the real one follows
      break;
    }
    if (r.header("transfer-encoding") == "chunked") {
      for (;;) {
        std::size_t e;
        while ((e = buf_.find("\r\n")) == std::string::npos)
          if (!fill(r)) return;
        std::size_t size = std::stoul(buf_.substr(0, e), nullptr, 16);
        while (buf_.size() < e + 2 + size + 2)
          if (!fill(r)) return;
        if (size == 0) {
          buf_.erase(0, e + 4);
          r.complete = true;
          return;
        }
        r.body += buf_.substr(e + 2, size);
        r.piece_times.push_back(Clock::now());
        buf_.erase(0, e + 2 + size + 2);
      }
    }
    std::size_t length =
        r.headers.count("content-length") ? std::stoul(r.header("content-length")) : 0;
    while (buf_.size() < length)
      if (!fill(r)) break;
    std::size_t take = std::min(length, buf_.size());
    r.body = buf_.substr(0, take);
    buf_.erase(0, take);
    r.complete = r.body.size() == length;
  }

  int fd_ = -1;
  std::string error_;
  std::string buf_;
  std::unique_ptr<SSL_CTX, SslFree> ctx_;
  std::unique_ptr<SSL, SslFree> ssl_;
};

/// Headers of a well-formed Anthropic request from loop `loop_id` of type `loop_type`.
inline std::map<std::string, std::string> anthropic_headers(const std::string& loop_type = "plan",
                                                            const std::string& loop_id = "001") {
  return {{"anthropic-version", "2026-10-21"},
          {"authorization", "Bearer test-key"},
          {"content-type", "application/json"},
          {"x-loopr-loop-type", loop_type},
          {"x-loopr-loop-id", loop_id}};
}

inline std::map<std::string, std::string> openai_headers(const std::string& loop_type = "code",
                                                         const std::string& loop_id = "001") {
  return {{"authorization", "Bearer test-key"},
          {"content-type", "application/json"},
          {"x-loopr-loop-type", loop_type},
          {"x-loopr-loop-id", loop_id}};
}

/// One POST on a fresh connection.
inline HttpResponse post(std::uint16_t port, const std::string& path,
                         const std::map<std::string, std::string>& headers, const Json& body,
                         std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  TestConnection c(port);
  c.set_timeout(timeout);
  return c.request("POST", path, headers, body.dump());
}

/// A child process (the real loopr-mock-llm) that is killed and reaped at scope exit: the tests'
/// one process handle (tests/support/subprocess.hpp).
using Child = loopr::testing::ChildProcess;

}  // namespace loopr::mock_llm::testing
