// A mock OAuth token endpoint on loopback, as the providers' token endpoints behave: a POST with a
// `refresh_token` gets a new access token and a new refresh token, and each refresh token is good
// once (a second use is refused, `invalid_grant`, and counted: the sign of a lost refresh). It
// keeps the last request (to check its fields), can answer slowly, or fail with a set status.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>

namespace loopr::testing {

/// A JWT (unsigned) whose `exp` is `exp` (seconds), as codex's access tokens are.
inline std::string jwt_until(std::int64_t exp) {
  auto b64 = [](const std::string& in) {
    static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    unsigned acc = 0;
    int bits = 0;
    for (unsigned char ch : in) {
      acc = (acc << 8) | ch;
      bits += 8;
      while (bits >= 6) out.push_back(t[(acc >> (bits -= 6)) & 63]);
    }
    if (bits > 0) out.push_back(t[(acc << (6 - bits)) & 63]);
    return out;
  };
  return b64("{\"alg\":\"none\"}") + "." + b64("{\"exp\":" + std::to_string(exp) + "}") + ".s";
}

class TokenServer {
 public:
  /// `first`: the refresh token the person's login holds; `expires_in`: seconds of each token.
  TokenServer(std::string first, int expires_in) : expires_in_(expires_in) {
    valid_.insert(std::move(first));
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~TokenServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/token"; }
  int refreshes() const { return refreshes_; }
  int reused() const { return reused_; }
  std::string latest_refresh_token() const {
    std::lock_guard lock(mutex_);
    return latest_;
  }
  /// The whole last request (head and body).
  std::string last_request() const {
    std::lock_guard lock(mutex_);
    return last_;
  }
  /// Every answer takes `ms` (so concurrent refreshes would overlap).
  void delay(int ms) { delay_ms_ = ms; }
  /// Every answer is `status` with an OAuth error body (0: answer normally).
  void fail_with(int status) { fail_status_ = status; }
  /// Requests received, refreshes or not.
  int requests() const { return requests_; }

 private:
  void serve() {
    while (!stop_) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      timeval tv{5, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      std::string req;
      char buf[4096];
      for (;;) {
        auto end = req.find("\r\n\r\n");
        if (end != std::string::npos) {
          std::smatch m;
          std::size_t want = 0;
          if (std::regex_search(req, m, std::regex("[Cc]ontent-[Ll]ength: *([0-9]+)")))
            want = std::stoul(m[1]);
          if (req.size() >= end + 4 + want) break;
        }
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        req.append(buf, static_cast<std::size_t>(n));
      }
      ++requests_;
      if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_.load()));
      {
        std::lock_guard lock(mutex_);
        last_ = req;
      }
      std::string body, status;
      if (fail_status_ != 0) {
        status = std::to_string(fail_status_.load()) + " Failed";
        body = "{\"error\":\"server_error\",\"error_description\":\"try later\"}";
      } else {
        body = answer(req);
        status = body.find("invalid_grant") == std::string::npos ? "200 OK" : "400 Bad Request";
      }
      std::string resp = "HTTP/1.1 " + status +
                         "\r\nContent-Type: application/json\r\nConnection: close\r\n"
                         "Content-Length: " +
                         std::to_string(body.size()) + "\r\n\r\n" + body;
      ssize_t w = ::write(c, resp.data(), resp.size());
      (void)w;
      ::close(c);
    }
  }

  std::string answer(const std::string& req) {
    std::smatch m;
    std::string token;
    if (std::regex_search(req, m, std::regex("refresh_token\"?[:=] *\"?([A-Za-z0-9_./-]+)")))
      token = m[1];
    std::lock_guard lock(mutex_);
    if (!valid_.erase(token)) {
      ++reused_;
      return "{\"error\":\"invalid_grant\",\"error_description\":\"refresh token " + token +
             " already used\"}";
    }
    int n = ++refreshes_;
    latest_ = "rt-" + std::to_string(n);
    valid_.insert(latest_);
    return "{\"access_token\":\"at-" + std::to_string(n) + "\",\"refresh_token\":\"" + latest_ +
           "\",\"expires_in\":" + std::to_string(expires_in_) + ",\"token_type\":\"Bearer\"}";
  }

  int fd_ = -1, port_ = 0, expires_in_;
  std::atomic<bool> stop_{false};
  std::atomic<int> refreshes_{0}, reused_{0}, requests_{0}, delay_ms_{0}, fail_status_{0};
  mutable std::mutex mutex_;
  std::set<std::string> valid_;
  std::string latest_, last_;
  std::thread thread_;
};

}  // namespace loopr::testing
