// Git work on a loop's worktree runs under a deadline (issue 28 item 3): nothing the model left
// there may hold a pool thread for good. The sweep (core/worktree_sweep.hpp) takes away what is
// known to block libgit2 (FIFOs, symlinked .gitignore files); this is the net under it.
#pragma once

#include <chrono>
#include <cstdint>

namespace loopr::git::detail {

/// How long git work on a worktree may wait before its blocking calls are interrupted: two
/// minutes (tests set less).
std::chrono::milliseconds worktree_deadline();
void set_worktree_deadline(std::chrono::milliseconds limit);

/// For its lifetime, the calling thread gets a signal (a handler that does nothing, without
/// SA_RESTART) once `limit` has passed and again every second until the guard ends. A system
/// call that waits on something that may never come (opening a FIFO that has no writer) then
/// fails with EINTR, libgit2 returns an error and the thread is free. The calls libgit2 repeats
/// after EINTR (read, write) go on, so slow honest work only takes its time. The signal is sent
/// only while the guard is held, and is handled before the guard's destructor can return.
class WorkDeadline {
 public:
  WorkDeadline() : WorkDeadline(worktree_deadline()) {}
  explicit WorkDeadline(std::chrono::milliseconds limit);
  ~WorkDeadline();
  WorkDeadline(const WorkDeadline&) = delete;
  WorkDeadline& operator=(const WorkDeadline&) = delete;

  /// Whether the deadline passed (the thread was interrupted at least once).
  bool expired() const;

 private:
  std::uint64_t id_;
};

}  // namespace loopr::git::detail
