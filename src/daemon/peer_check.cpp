#include "daemon/peer_check.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include <loopr/exec/sandbox_view.hpp>

namespace loopr::daemon {
namespace fs = std::filesystem;

namespace {

constexpr int kSoPeerPidfd = 77;  // SO_PEERPIDFD (Linux 6.5): the peer pinned, not its number

bool same_namespace(int pid, const char* ns) {
  struct stat mine {
  }, theirs{};
  std::string self = std::string("/proc/self/ns/") + ns;
  std::string other = "/proc/" + std::to_string(pid) + "/ns/" + ns;
  return ::stat(self.c_str(), &mine) == 0 && ::stat(other.c_str(), &theirs) == 0 &&
         mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev;
}

PeerVerdict refuse(int pid, std::string why) { return {true, pid, std::move(why)}; }

// `addr:port` as /proc/net/tcp{,6} print it (the address's raw words in hex, the port's value).
std::string proc_net_endpoint(const sockaddr_storage& a) {
  char buf[64];
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    std::snprintf(buf, sizeof buf, "%08X:%04X", v4.sin_addr.s_addr, ntohs(v4.sin_port));
  } else {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    std::uint32_t w[4];
    std::memcpy(w, &v6.sin6_addr, sizeof w);
    std::snprintf(buf, sizeof buf, "%08X%08X%08X%08X:%04X", w[0], w[1], w[2], w[3],
                  ntohs(v6.sin6_port));
  }
  return buf;
}

// The inode of the peer's end of TCP socket `fd`: the entry whose local address is the peer
// and whose remote address is us.
unsigned long tcp_peer_inode(int fd) {
  sockaddr_storage mine{}, peer{};
  socklen_t ml = sizeof mine, pl = sizeof peer;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &ml) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0)
    return 0;
  const std::string local = proc_net_endpoint(peer), remote = proc_net_endpoint(mine);
  for (const char* table : {"/proc/thread-self/net/tcp", "/proc/thread-self/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string slot, l, r, state, queues, timer, retransmits, uid, timeout;
      unsigned long inode = 0;
      f >> slot >> l >> r >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (l == local && r == remote) return inode;
    }
  }
  return 0;
}

// Every process holding socket `inode` (a descriptor may have been passed on or inherited).
std::vector<int> holders(unsigned long inode) {
  std::vector<int> pids;
  const std::string target = "socket:[" + std::to_string(inode) + "]";
  const int self = static_cast<int>(::getpid());
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] < '1' || name[0] > '9') continue;
    int pid = std::atoi(name.c_str());
    if (pid == self) continue;
    std::error_code fe;
    for (auto f = fs::directory_iterator(it->path() / "fd", fe);
         !fe && f != fs::directory_iterator(); f.increment(fe)) {
      char link[64];
      ssize_t n = ::readlink(f->path().c_str(), link, sizeof link - 1);
      if (n > 0 && std::string_view(link, static_cast<std::size_t>(n)) == target) {
        pids.push_back(pid);
        break;
      }
    }
  }
  return pids;
}

PeerVerdict check_tcp(int fd) {
  unsigned long inode = tcp_peer_inode(fd);
  if (inode == 0) return refuse(0, "its socket is not in this network namespace's table");
  std::vector<int> pids = holders(inode);
  if (pids.empty()) return refuse(0, "no process of this user holds its end of the connection");
  for (int pid : pids)
    if (auto v = check_peer_process(pid); v.refused) return v;
  return {false, pids.front(), ""};
}

PeerVerdict check_unix(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0)
    return refuse(0, "its process cannot be found (SO_PEERCRED)");
  int pidfd = -1;
  len = sizeof pidfd;
  if (::getsockopt(fd, SOL_SOCKET, kSoPeerPidfd, &pidfd, &len) != 0) pidfd = -1;
  PeerVerdict v = check_peer_process(cred.pid);
  // The number read in /proc was the peer's own only while the peer lives (no reuse then).
  if (pidfd >= 0) {
    if (!v.refused && ::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) != 0)
      v = refuse(cred.pid, "its process ended before it could be checked");
    ::close(pidfd);
  }
  return v;
}

}  // namespace

PeerVerdict check_peer_process(int pid) {
  if (pid <= 0) return refuse(pid, "its process cannot be found");
  // The daemon's own mount namespace: the person's shell beside the daemon, or (a daemon that
  // itself runs in a sandbox) a command in that same sandbox.
  if (same_namespace(pid, "mnt")) return {false, pid, ""};
  std::string marker = "/proc/" + std::to_string(pid) + "/root" + exec::kSandboxMarker;
  struct stat st {};
  if (::stat(marker.c_str(), &st) == 0)
    return refuse(pid,
                  "it runs in a loopr sandbox (a model's command, of this repository or "
                  "another)");
  int e = errno;
  if (e == ENOENT || e == ENOTDIR) return {false, pid, ""};
  // Unreadable: the person's own processes in the daemon's user namespace are readable; a
  // process that is not cannot be told from a sandbox.
  if (same_namespace(pid, "user") && e != ESRCH) return {false, pid, ""};
  return refuse(pid, std::string("it cannot be told from a sandbox (") + std::strerror(e) + ")");
}

PeerVerdict check_peer(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return refuse(0, std::string("getsockname: ") + std::strerror(errno));
  if (a.ss_family == AF_UNIX) return check_unix(fd);
  if (a.ss_family == AF_INET || a.ss_family == AF_INET6) return check_tcp(fd);
  return refuse(0, "an unknown kind of socket");
}

}  // namespace loopr::daemon
