// How the outside world (the user through the daemon, the manager) talks to a running loop:
// flags the loop reads at its boundaries, and a stop that also interrupts what is in flight.
// Used on the io thread only, except `cancel_flag()`, which worker threads read.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>

#include <loopr/core/end_reason.hpp>

namespace loopr::engine {

/// Who asked a loop to stop (the latest request counts, like its reason).
enum class StopCause {
  user,             ///< a person, or the tree's failure policy
  daemon_stopping,  ///< the daemon shuts down: the loop resumes at the next start
};

class LoopControl {
 public:
  /// Stop now: in-flight model calls are abandoned, tool and validation processes killed.
  /// `end`: the loop's end reason when it ends stopped by this request.
  void request_stop(std::string reason = "stopped by the user", StopCause cause = StopCause::user,
                    EndReason end = EndReason::stopped_by_user) {
    stop_ = true;
    stop_reason_ = std::move(reason);
    stop_cause_ = cause;
    stop_end_ = cause == StopCause::daemon_stopping ? EndReason::daemon_stopped : end;
    cancel_ = true;
    wake_all();
  }
  /// Pause at the next iteration boundary (the iteration in flight finishes first).
  void request_pause() { pause_ = true; }
  /// The plan's integration branch moved: rebase at the next boundary.
  void notify_integration_updated() { integration_updated_ = true; }

  bool stop_requested() const { return stop_; }
  const std::string& stop_reason() const { return stop_reason_; }
  StopCause stop_cause() const { return stop_cause_; }
  EndReason stop_end() const { return stop_end_; }
  bool pause_requested() const { return pause_; }
  bool take_integration_updated() { return std::exchange(integration_updated_, false); }
  bool integration_updated() const { return integration_updated_; }
  const std::atomic<bool>* cancel_flag() const { return &cancel_; }

  /// Registers a callback that wakes a coroutine waiting on something else (a timer).
  int add_waker(std::function<void()> wake) {
    wakers_[next_waker_] = std::move(wake);
    return next_waker_++;
  }
  void remove_waker(int id) { wakers_.erase(id); }

 private:
  void wake_all() {
    auto copy = wakers_;
    for (auto& [id, wake] : copy) wake();
  }

  bool stop_ = false;
  bool pause_ = false;
  bool integration_updated_ = false;
  std::string stop_reason_;
  StopCause stop_cause_ = StopCause::user;
  EndReason stop_end_ = EndReason::stopped_by_user;
  std::atomic<bool> cancel_{false};
  std::map<int, std::function<void()>> wakers_;
  int next_waker_ = 0;
};

}  // namespace loopr::engine
