#include <loopr/engine/loop_journal.hpp>
#include <loopr/engine/scheduler.hpp>

namespace loopr::engine {

SchedulerOptions SchedulerOptions::from_config(const Config& config) {
  SchedulerOptions o;
  o.slots = config.concurrency.llm_slots;
  o.rate_limit = config.concurrency.requests_per_minute;
  for (LoopType t : kAllLoopTypes) {
    auto it = config.concurrency.priority.find(to_string(t));
    if (it != config.concurrency.priority.end()) o.base_priority[t] = it->second;
  }
  return o;
}

struct Scheduler::Waiter {
  int base = 0;
  Clock::time_point enqueued;
  std::uint64_t seq = 0;
  std::string key;
  bool granted = false;
  bool cancelled = false;
  net::steady_timer timer;
  explicit Waiter(net::any_io_executor ex) : timer(ex, Clock::time_point::max()) {}
};

Scheduler::Scheduler(net::any_io_executor executor, SchedulerOptions options,
                     TimestampMs paused_until, PersistPause persist)
    : executor_(executor),
      options_(std::move(options)),
      persist_(std::move(persist)),
      wakeup_(std::make_unique<net::steady_timer>(executor)) {
  TimestampMs now = now_ms();
  if (paused_until > now)
    paused_until_ = Clock::now() + std::chrono::milliseconds(paused_until - now);
}

Scheduler::~Scheduler() = default;

Scheduler::Slot& Scheduler::Slot::operator=(Slot&& o) noexcept {
  if (this != &o) {
    reset();
    owner_ = o.owner_;
    o.owner_ = nullptr;
  }
  return *this;
}

void Scheduler::Slot::reset() {
  if (owner_) {
    Scheduler* s = owner_;
    owner_ = nullptr;
    s->release();
  }
}

awaitable<Scheduler::Slot> Scheduler::acquire(LoopType type, bool continuation,
                                              std::string cancel_key) {
  auto waiter = std::make_shared<Waiter>(executor_);
  waiter->base = options_.base_priority[type] + (continuation ? options_.continuation_bonus : 0);
  waiter->enqueued = Clock::now();
  waiter->seq = next_seq_++;
  waiter->key = std::move(cancel_key);
  waiters_.push_back(waiter);
  pump();
  while (!waiter->granted && !waiter->cancelled) {
    boost::system::error_code ec;
    co_await waiter->timer.async_wait(net::redirect_error(net::use_awaitable, ec));
  }
  if (!waiter->granted) co_return Slot();
  co_return Slot(this);
}

void Scheduler::cancel(const std::string& key) {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if ((*it)->key == key) {
      (*it)->cancelled = true;
      (*it)->timer.cancel();
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
}

void Scheduler::pause_until(std::chrono::system_clock::time_point until) {
  auto delta = until - std::chrono::system_clock::now();
  auto at = Clock::now() + std::chrono::duration_cast<Clock::duration>(delta);
  if (at <= paused_until_) return;
  paused_until_ = at;
  if (persist_)
    persist_(
        std::chrono::duration_cast<std::chrono::milliseconds>(until.time_since_epoch()).count());
  pump();
}

void Scheduler::set_options(SchedulerOptions options) {
  options_ = std::move(options);
  pump();
}

Scheduler::Stats Scheduler::stats() const {
  Stats s = stats_;
  s.waiting = static_cast<int>(waiters_.size());
  return s;
}

void Scheduler::release() {
  --stats_.in_flight;
  // Post, so a Slot released inside a waiter's resumption never re-enters pump() recursively.
  net::post(executor_, [this] { pump(); });
}

void Scheduler::pump() {
  auto now = Clock::now();
  while (!waiters_.empty() && stats_.in_flight < options_.slots) {
    if (now < paused_until_) {
      arm_wakeup(paused_until_);
      return;
    }
    while (!recent_grants_.empty() && recent_grants_.front() + options_.rate_window <= now)
      recent_grants_.pop_front();
    if (static_cast<int>(recent_grants_.size()) >= options_.rate_limit) {
      arm_wakeup(recent_grants_.front() + options_.rate_window);
      return;
    }
    auto best = waiters_.end();
    long best_priority = 0;
    for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
      auto waited = now - (*it)->enqueued;
      long age = static_cast<long>(waited / options_.ageing_step);
      long priority = (*it)->base + std::min<long>(age, options_.ageing_cap);
      // Strictly greater: among equals the earlier waiter (front of the list) keeps its turn.
      if (best == waiters_.end() || priority > best_priority) {
        best = it;
        best_priority = priority;
      }
    }
    auto w = *best;
    waiters_.erase(best);
    w->granted = true;
    w->timer.cancel();
    recent_grants_.push_back(now);
    ++stats_.in_flight;
    ++stats_.granted;
    stats_.peak_in_flight = std::max(stats_.peak_in_flight, stats_.in_flight);
  }
}

void Scheduler::arm_wakeup(Clock::time_point at) {
  if (wakeup_at_ <= at && wakeup_at_ > Clock::now()) return;  // an earlier wake-up is armed
  wakeup_at_ = at;
  wakeup_->expires_at(at);
  wakeup_->async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    wakeup_at_ = Clock::time_point::max();
    pump();
  });
}

namespace {
std::string pause_key(const std::string& provider) { return "provider_pause_until:" + provider; }
}  // namespace

TimestampMs stored_provider_pause(const TaskStore& store, const std::string& provider) {
  auto value = store.get_meta(pause_key(provider));
  if (!value || !value->has_value()) return 0;
  try {
    return std::stoll(**value);
  } catch (...) {
    return 0;  // a damaged value only loses a pause, which the next 429 sets again
  }
}

Scheduler::PersistPause persist_provider_pause(LoopJournal& journal, std::string provider) {
  return [&journal, provider = std::move(provider)](TimestampMs until) {
    // Rare (once per 429) and small: written at once, so the pause is durable before any retry.
    (void)journal.put_meta(pause_key(provider), std::to_string(until));
  };
}

}  // namespace loopr::engine
