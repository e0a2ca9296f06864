// Runner slots: how many commands of each class (default / net / heavy) run at once, from
// `concurrency.runners`; the class of a command comes from `concurrency.runner_patterns`.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>

namespace re2 {
class RE2;
}

namespace loopr::tools {

class RunnerSlots {
 public:
  explicit RunnerSlots(const ConcurrencyConfig& config);
  ~RunnerSlots();

  /// `net`, `heavy` or `default` for a command line.
  std::string classify(const std::string& command) const;

  /// New limits and patterns (the daemon's SIGHUP). Commands holding a slot keep it; a lower
  /// limit holds new ones back until enough have finished.
  void reconfigure(const ConcurrencyConfig& config);

  /// Holds one slot of a class until destroyed. Blocking: call from a worker thread.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : slots_(other.slots_), cls_(std::move(other.cls_)) {
      other.slots_ = nullptr;
    }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    const std::string& runner_class() const { return cls_; }

   private:
    friend class RunnerSlots;
    Lease(RunnerSlots* slots, std::string cls) : slots_(slots), cls_(std::move(cls)) {}
    RunnerSlots* slots_;
    std::string cls_;
  };

  Lease acquire(const std::string& runner_class);
  /// Slots of a class in use now (for tests and `daemon status`).
  int in_use(const std::string& runner_class) const;
  /// The most slots of a class ever in use at once.
  int peak(const std::string& runner_class) const;

 private:
  void release(const std::string& runner_class);

  struct Class {
    int limit = 1;
    int used = 0;
    int peak = 0;
  };
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::map<std::string, Class> classes_;
  std::vector<std::pair<std::string, std::unique_ptr<re2::RE2>>> patterns_;
};

}  // namespace loopr::tools
