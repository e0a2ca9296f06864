// An executor's readiness check (`unavailable()`, asked before commands run): run once, then
// again at most every 5 s while it fails; once it passed it is not run again.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

namespace loopr::exec {

class ProbeCache {
 public:
  /// `probe()` gives the problem (nullopt: ready); called under this cache's lock.
  template <typename Probe>
  std::optional<std::string> get(Probe&& probe) {
    std::lock_guard lock(mutex_);
    if (checked_ && !problem_) return std::nullopt;
    if (checked_ && Clock::now() - last_check_ < std::chrono::seconds(5)) return problem_;
    last_check_ = Clock::now();
    checked_ = true;
    problem_ = probe();
    return problem_;
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::mutex mutex_;
  bool checked_ = false;
  Clock::time_point last_check_{};
  std::optional<std::string> problem_;
};

}  // namespace loopr::exec
