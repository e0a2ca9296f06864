// The claude CLI's only way out (issue 28, the shape of Anthropic's sandbox-runtime): the CLI
// runs in a sandbox without a network; a bridge inside (`loopr sandbox-bridge`) carries its
// proxy connections to this proxy's Unix socket, bound into the sandbox; the proxy opens a
// connection only to an allowed `host:port` (the API host, and what
// `llm.claude_code.allowed_hosts` adds). It speaks `CONNECT host:port` (HTTPS, tunnelled as
// is) and absolute-form plain HTTP requests (`POST http://127.0.0.1:8080/v1/messages`, one per
// connection). Anything else is refused with 403 and logged.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <loopr/core/result.hpp>

namespace loopr::llm {

/// `host:port` as the proxy compares them: host in lower case, IPv6 in brackets.
std::string host_port(std::string host, const std::string& port);

class HostProxy {
 public:
  /// Listens on the Unix socket `path` (mode 0600; a stale file there is replaced).
  /// `cli` and `config_key` name the CLI and its configuration key in refusals.
  static Result<std::unique_ptr<HostProxy>> start(std::filesystem::path path,
                                                  std::set<std::string> allowed,
                                                  std::string cli = "claude",
                                                  std::string config_key = "claude_code");
  /// Stops accepting and removes the socket (connections open now end with their peers).
  ~HostProxy();
  HostProxy(const HostProxy&) = delete;
  HostProxy& operator=(const HostProxy&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const std::set<std::string>& allowed() const { return shared_->allowed; }
  /// Connections refused so far (not allowed, or not a proxy request).
  int refused() const { return shared_->refused.load(); }

  struct Shared {
    std::set<std::string> allowed;
    std::string cli, config_key;
    std::atomic<bool> stop{false};
    std::atomic<int> refused{0};
  };

 private:
  struct Key {};  // only `start` makes one

 public:
  HostProxy(Key, std::filesystem::path path, int fd, std::shared_ptr<Shared> shared);

 private:
  void accept_loop();

  std::filesystem::path path_;
  int fd_ = -1;
  std::shared_ptr<Shared> shared_;
  std::thread acceptor_;
};

}  // namespace loopr::llm
