#include "git/deadline.hpp"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace loopr::git::detail {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRepeat = std::chrono::seconds(1);

extern "C" void on_deadline_signal(int) {}

int deadline_signal() { return SIGRTMIN + 7; }

// One thread for the process, made on first use and never stopped (like libgit2's init).
class Watchdog {
 public:
  static Watchdog& instance() {
    static Watchdog* w = new Watchdog;
    return *w;
  }

  std::uint64_t add(pthread_t thread, Clock::time_point due) {
    std::lock_guard lock(mutex_);
    std::uint64_t id = ++last_id_;
    entries_[id] = Entry{thread, due, false};
    wake_.notify_one();
    return id;
  }

  bool fired(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(id);
    return it != entries_.end() && it->second.fired;
  }

  // Under the same lock as the sending: once this returns, no signal for the thread is on its
  // way (one sent before was delivered when the thread came back from the kernel to take it).
  void remove(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    entries_.erase(id);
  }

 private:
  struct Entry {
    pthread_t thread;
    Clock::time_point next;
    bool fired;
  };

  Watchdog() {
    struct sigaction sa {};
    sa.sa_handler = on_deadline_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: the waiting call returns EINTR
    sigaction(deadline_signal(), &sa, nullptr);
    std::thread([this] { run(); }).detach();
  }

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (entries_.empty()) {
        wake_.wait(lock);
        continue;
      }
      Clock::time_point next = Clock::time_point::max();
      for (const auto& [id, e] : entries_) next = std::min(next, e.next);
      wake_.wait_until(lock, next);
      const Clock::time_point now = Clock::now();
      for (auto& [id, e] : entries_) {
        if (e.next > now) continue;
        pthread_kill(e.thread, deadline_signal());
        e.fired = true;
        e.next = now + kRepeat;
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::uint64_t, Entry> entries_;
  std::uint64_t last_id_ = 0;
};

std::atomic<std::int64_t> deadline_ms{std::chrono::milliseconds(std::chrono::minutes(2)).count()};

}  // namespace

std::chrono::milliseconds worktree_deadline() {
  return std::chrono::milliseconds(deadline_ms.load());
}

void set_worktree_deadline(std::chrono::milliseconds limit) { deadline_ms = limit.count(); }

WorkDeadline::WorkDeadline(std::chrono::milliseconds limit)
    : id_(Watchdog::instance().add(pthread_self(), Clock::now() + limit)) {}

WorkDeadline::~WorkDeadline() { Watchdog::instance().remove(id_); }

bool WorkDeadline::expired() const { return Watchdog::instance().fired(id_); }

}  // namespace loopr::git::detail
