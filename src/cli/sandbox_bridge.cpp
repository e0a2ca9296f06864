// `loopr sandbox-bridge SOCKET PORT -- COMMAND…` (hidden; llm/host_proxy.hpp has the whole
// path): runs inside a sandbox that has no network but its own loopback. It listens on
// 127.0.0.1:PORT there and carries every connection to the Unix socket SOCKET (the daemon's
// allowlisting proxy, bound into the sandbox), while COMMAND runs with its proxy variables
// pointing at that port. It ends with COMMAND's exit status.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <thread>

#include <loopr/core/socket_pump.hpp>

#include "cli/command.hpp"
#include "cli/commands.hpp"

namespace loopr::cli {
namespace {

int connect_unix(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

}  // namespace

int run_sandbox_bridge(const std::string& socket_path, int port,
                       const std::vector<std::string>& command) {
  if (command.empty())
    throw CommandError{kUsage, "sandbox-bridge needs a command after --", "it is loopr's own"};
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listener, 64) != 0)
    throw CommandError{kFailed,
                       "sandbox-bridge cannot listen on 127.0.0.1:" + std::to_string(port) + ": " +
                           std::strerror(errno),
                       "the sandbox needs its own loopback"};
  std::cout.flush();
  std::cerr.flush();
  pid_t child = ::fork();
  if (child < 0)
    throw CommandError{kFailed, std::string("sandbox-bridge cannot fork: ") + std::strerror(errno),
                       "check the sandbox's process limit"};
  if (child == 0) {
    std::vector<char*> argv;
    for (const auto& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "loopr sandbox-bridge: cannot start %s: %s\n", argv[0],
                 std::strerror(errno));
    ::_exit(127);
  }
  while (true) {
    int status = 0;
    pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) {
      ::close(listener);
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }
    pollfd p{listener, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::thread([client, socket_path] {
      int up = connect_unix(socket_path);
      if (up >= 0) {
        pump_both_ways(client, up);
        ::close(up);
      }
      ::close(client);
    }).detach();
  }
}

namespace {

// Hidden: loopr's own network bridge inside the claude CLI's sandbox (llm/host_proxy.hpp).
CommandRun define_sandbox_bridge(CLI::App& bridge) {
  struct Values {
    std::string socket;
    int port = 0;
    std::vector<std::string> command;
  };
  auto v = std::make_shared<Values>();
  bridge.add_option("socket", v->socket)->required();
  bridge.add_option("port", v->port)->required();
  bridge.add_option("command", v->command)->required();
  return CommandRun([v](Session&) { return run_sandbox_bridge(v->socket, v->port, v->command); },
                    [] { return true; });
}

}  // namespace

const Command kSandboxBridgeCommand{"sandbox-bridge", "loopr's network bridge in a sandbox", true,
                                    Needs::nothing, define_sandbox_bridge};

}  // namespace loopr::cli
