// The LLM scheduler: at most `slots` model calls in flight, at most `rate_limit` requests in any
// `rate_window`, and a provider-wide pause after a 429 (persisted, so a restart honours it).
// Who goes next is decided by priority: a base per loop type (work nearer to code first), a
// bonus for a conversation already under way, and +1 per minute waited (capped) so nothing
// starves; FIFO among equals. Everything runs on the io thread.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>

#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/net/asio.hpp>
#include <loopr/store/task_store.hpp>

namespace loopr::engine {

class LoopJournal;

struct SchedulerOptions {
  int slots = 4;
  int rate_limit = 50;
  std::chrono::milliseconds rate_window = std::chrono::minutes(1);
  std::map<LoopType, int> base_priority = {
      {LoopType::plan, 40}, {LoopType::spec, 60}, {LoopType::phase, 80}, {LoopType::code, 100}};
  int continuation_bonus = 50;  ///< a call that continues an iteration's conversation
  int ageing_cap = 60;          ///< the most a waiter gains from waiting
  std::chrono::milliseconds ageing_step = std::chrono::minutes(1);

  static SchedulerOptions from_config(const Config& config);
};

class Scheduler {
 public:
  using Clock = std::chrono::steady_clock;
  /// Called when a provider-wide pause is set, with its end as wall-clock epoch ms.
  using PersistPause = std::function<void(TimestampMs until)>;

  Scheduler(net::any_io_executor executor, SchedulerOptions options, TimestampMs paused_until = 0,
            PersistPause persist = {});
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// A granted slot; releasing it (destruction) lets the next waiter go.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& o) noexcept : owner_(o.owner_) { o.owner_ = nullptr; }
    Slot& operator=(Slot&& o) noexcept;
    ~Slot() { reset(); }
    explicit operator bool() const { return owner_ != nullptr; }
    void reset();

   private:
    friend class Scheduler;
    explicit Slot(Scheduler* owner) : owner_(owner) {}
    Scheduler* owner_ = nullptr;
  };

  /// Waits for a slot. Returns an empty Slot if `cancel_key` is cancelled meanwhile.
  awaitable<Slot> acquire(LoopType type, bool continuation, std::string cancel_key);

  /// Wakes the waiters registered under `key` with an empty Slot (a loop being stopped).
  void cancel(const std::string& key);

  /// Holds every new grant until `until` (a 429's retry-after), for all loops.
  void pause_until(std::chrono::system_clock::time_point until);

  /// Changes limits (config reload); waiters are re-evaluated.
  void set_options(SchedulerOptions options);

  struct Stats {
    int in_flight = 0;
    int waiting = 0;
    int peak_in_flight = 0;
    std::uint64_t granted = 0;
  };
  Stats stats() const;

 private:
  struct Waiter;
  void pump();
  void release();
  void arm_wakeup(Clock::time_point at);

  net::any_io_executor executor_;
  SchedulerOptions options_;
  PersistPause persist_;
  std::list<std::shared_ptr<Waiter>> waiters_;
  std::deque<Clock::time_point> recent_grants_;
  Clock::time_point paused_until_{};
  std::unique_ptr<net::steady_timer> wakeup_;
  Clock::time_point wakeup_at_ = Clock::time_point::max();
  std::uint64_t next_seq_ = 0;
  Stats stats_;
};

/// The provider-wide pause kept in the store's meta (`provider_pause_until:<provider>`), so a
/// 429's retry-after still holds after a daemon restart.
TimestampMs stored_provider_pause(const TaskStore& store, const std::string& provider);
/// Writes the pause through the journal (which outlives the scheduler).
Scheduler::PersistPause persist_provider_pause(LoopJournal& journal, std::string provider);

}  // namespace loopr::engine
