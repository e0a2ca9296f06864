#include "exec/netns_pool.hpp"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace loopr::exec {

namespace {

// Brings `lo` of the calling thread's network namespace up (the kernel then gives it 127.0.0.1
// and ::1, as bubblewrap's own setup does).
bool loopback_up() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  ifreq req{};
  std::strncpy(req.ifr_name, "lo", IFNAMSIZ - 1);
  bool ok = ::ioctl(s, SIOCGIFFLAGS, &req) == 0;
  if (ok) {
    req.ifr_flags = static_cast<short>(req.ifr_flags | IFF_UP | IFF_RUNNING);
    ok = ::ioctl(s, SIOCSIFFLAGS, &req) == 0;
  }
  int e = errno;
  ::close(s);
  errno = e;
  return ok;
}

}  // namespace

int make_empty_netns(int home) {
  if (::unshare(CLONE_NEWNET) != 0) return -1;
  int fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  int e = errno;
  bool up = fd >= 0 && loopback_up();
  e = fd >= 0 && !up ? errno : e;
  // Back home whatever happened: this thread never works in a command's namespace.
  if (::setns(home, CLONE_NEWNET) != 0) {
    spdlog::critical("sandbox: cannot return to the daemon's network namespace: {}",
                     std::strerror(errno));
    std::abort();
  }
  if (fd >= 0 && !up) {
    ::close(fd);
    fd = -1;
  }
  errno = e;
  return fd;
}

std::unique_ptr<NetnsPool> NetnsPool::open(std::size_t size) {
  if (::geteuid() != 0) return nullptr;
  int home = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home < 0) return nullptr;
  // One made and entered here, on a short-lived thread: if that works, the pool works.
  bool works = false;
  std::thread probe([&] {
    int fd = make_empty_netns(home);
    if (fd < 0) return;
    int back = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    works = back >= 0 && ::setns(fd, CLONE_NEWNET) == 0 && ::setns(home, CLONE_NEWNET) == 0;
    if (back >= 0) ::close(back);
    ::close(fd);
  });
  probe.join();
  if (!works) {
    ::close(home);
    return nullptr;
  }
  return std::unique_ptr<NetnsPool>(new NetnsPool(size, home));
}

NetnsPool::NetnsPool(std::size_t size, int home) : size_(size), home_(home) {
  thread_ = std::thread([this] { fill(); });
}

NetnsPool::~NetnsPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  for (int fd : ready_) ::close(fd);
  ::close(home_);
}

int NetnsPool::take() {
  int fd = -1;
  {
    std::lock_guard lock(mutex_);
    if (!ready_.empty()) {
      fd = ready_.front();
      ready_.pop_front();
    }
  }
  wake_.notify_all();
  return fd;
}

void NetnsPool::fill() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (ready_.size() >= size_) {
      wake_.wait(lock);
      continue;
    }
    lock.unlock();
    int fd = make_empty_netns(home_);
    lock.lock();
    if (fd < 0) {
      // Should not happen after the probe; commands then get bubblewrap's own namespace.
      spdlog::warn("sandbox: cannot make a network namespace ahead: {}", std::strerror(errno));
      wake_.wait_for(lock, std::chrono::seconds(5));
      continue;
    }
    ready_.push_back(fd);
  }
}

}  // namespace loopr::exec
