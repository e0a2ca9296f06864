// Empty network namespaces made ahead of time, one per command. Making a network namespace is
// the largest single step of a sandbox's start (~1 ms of bubblewrap's ~5); a pool thread makes
// them off the command's path, each with only its loopback interface up (what bubblewrap's
// `--unshare-net` gives), and each is handed out once and never reused: a command sees a
// network namespace no other command has been in. The command's process enters it before it
// starts bubblewrap (ProcessSpec::netns_fd) and bubblewrap runs with `--share-net`.
//
// Only where this daemon may enter a namespace it made (root: CAP_SYS_ADMIN over it); elsewhere
// `open()` returns nullptr and bubblewrap makes the namespace itself, as before. The namespaces
// belong to the daemon's user namespace, so the sandbox (a user namespace below it, every
// capability dropped) has no privilege over them either.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace loopr::exec {

class NetnsPool {
 public:
  /// A pool of `size` namespaces, or nullptr when namespaces cannot be made and entered here.
  static std::unique_ptr<NetnsPool> open(std::size_t size = 4);
  ~NetnsPool();
  NetnsPool(const NetnsPool&) = delete;
  NetnsPool& operator=(const NetnsPool&) = delete;

  /// An open descriptor (O_CLOEXEC) of a namespace never handed out before, for the caller to
  /// close; -1 when none is ready (the caller lets bubblewrap make one). Never blocks.
  int take();

 private:
  explicit NetnsPool(std::size_t size, int home);
  void fill();

  const std::size_t size_;
  const int home_;  ///< the daemon's own network namespace, for the pool thread to return to
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<int> ready_;
  bool stop_ = false;
  std::thread thread_;
};

/// A new network namespace with its loopback up, made by the calling thread, which returns to
/// `home` (its own namespace, open) afterwards; -1 (errno set) if it cannot be made.
int make_empty_netns(int home);

}  // namespace loopr::exec
