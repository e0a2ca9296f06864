// Small synchronisation for coroutines on one io thread: an event, a counting semaphore and a
// mutex whose waiters are coroutines (each parked on its own timer, woken by cancelling it).
// Single-threaded: use only on the io thread that runs the coroutines.
#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <vector>

#include <loopr/net/asio.hpp>

namespace loopr {

/// Set once; every coroutine waiting for it wakes.
class AsyncEvent {
 public:
  explicit AsyncEvent(net::any_io_executor ex) : ex_(std::move(ex)) {}

  void set() {
    set_ = true;
    for (auto& w : waiters_)
      if (auto timer = w.lock()) timer->cancel();
    waiters_.clear();
  }
  bool is_set() const { return set_; }

  /// True once set; false when `deadline` came first.
  awaitable<bool> wait_until(std::chrono::steady_clock::time_point deadline) {
    if (set_) co_return true;
    auto timer = std::make_shared<net::steady_timer>(ex_, deadline);
    std::erase_if(waiters_, [](const auto& w) { return w.expired(); });
    waiters_.push_back(timer);
    while (!set_ && std::chrono::steady_clock::now() < deadline) {
      boost::system::error_code ec;
      co_await timer->async_wait(net::redirect_error(net::use_awaitable, ec));
    }
    co_return set_;
  }

 private:
  net::any_io_executor ex_;
  bool set_ = false;
  std::vector<std::weak_ptr<net::steady_timer>> waiters_;
};

/// At most `capacity` holders; waiters of a higher priority first, FIFO among equals; a waiter
/// can be cancelled.
class AsyncSemaphore {
 public:
  struct Waiter {
    net::steady_timer timer;
    bool granted = false;
    bool cancelled = false;
    int priority = 0;  ///< higher goes first
    explicit Waiter(net::any_io_executor ex, int prio = 0)
        : timer(ex, net::steady_timer::time_point::max()), priority(prio) {}
  };

  AsyncSemaphore(net::any_io_executor ex, int capacity) : ex_(std::move(ex)), capacity_(capacity) {}

  std::shared_ptr<Waiter> make_waiter(int priority = 0) {
    return std::make_shared<Waiter>(ex_, priority);
  }

  /// True once granted; false if `w` was cancelled first.
  awaitable<bool> acquire(std::shared_ptr<Waiter> w) {
    if (w->cancelled) co_return false;
    if (held_ < capacity_ && queue_.empty()) {
      ++held_;
      w->granted = true;
      co_return true;
    }
    // Behind every waiter of its priority or a higher one (stable: FIFO among equals).
    auto at = std::find_if(queue_.begin(), queue_.end(),
                           [&](const auto& q) { return q->priority < w->priority; });
    queue_.insert(at, w);
    while (!w->granted && !w->cancelled) {
      boost::system::error_code ec;
      co_await w->timer.async_wait(net::redirect_error(net::use_awaitable, ec));
    }
    co_return w->granted;
  }

  /// Wakes `w` without a grant (a loop stopped or paused while it waited).
  void cancel(const std::shared_ptr<Waiter>& w) {
    if (w->granted || w->cancelled) return;
    w->cancelled = true;
    w->timer.cancel();
  }

  void release() {
    if (held_ > 0) --held_;
    grant();
  }

  void set_capacity(int capacity) {
    capacity_ = capacity < 1 ? 1 : capacity;
    grant();
  }

  int held() const { return held_; }
  std::size_t waiting() const { return queue_.size(); }

 private:
  void grant() {
    while (held_ < capacity_ && !queue_.empty()) {
      auto w = queue_.front();
      queue_.pop_front();
      if (w->cancelled) continue;
      ++held_;
      w->granted = true;
      w->timer.cancel();
    }
  }

  net::any_io_executor ex_;
  int capacity_;
  int held_ = 0;
  std::deque<std::shared_ptr<Waiter>> queue_;
};

/// A mutex for coroutines: `auto guard = co_await mutex.lock();` holds it until `guard` dies.
class AsyncMutex {
 public:
  explicit AsyncMutex(net::any_io_executor ex) : sem_(std::move(ex), 1) {}

  class Guard {
   public:
    explicit Guard(AsyncMutex* m) : m_(m) {}
    Guard(Guard&& other) noexcept : m_(std::exchange(other.m_, nullptr)) {}
    Guard& operator=(Guard&&) = delete;
    ~Guard() {
      if (m_) m_->sem_.release();
    }

   private:
    AsyncMutex* m_;
  };

  awaitable<Guard> lock() {
    auto w = sem_.make_waiter();
    co_await sem_.acquire(w);
    co_return Guard(this);
  }

 private:
  AsyncSemaphore sem_;
};

}  // namespace loopr
