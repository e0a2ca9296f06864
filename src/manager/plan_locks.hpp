// One lock per plan (issue 44 R4: a single-flight runner per plan): the steps that change a
// tree's shape (completion, failure, iterate, resume, merge, CI verdicts, gc) run one at a time
// for each plan, and the steps of other plans go on meanwhile. One lock for every plan made one
// plan's integration check (the project's whole test run, under the lock from the last
// completion to the tree's mark) hold every other plan's completions, failures and `loopr merge`,
// and `loopr submit` itself.
//
// Nothing a step does is shared between plans but the base branch, and its merge is a
// compare-and-set on the branch (git/merge.cpp: it is made again on the new tip when another
// merge moved it first), so no lock spans plans. A plan's entry lives while someone holds or
// waits for its lock. Single-threaded: use only on the io thread, like AsyncMutex.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include <loopr/net/async.hpp>

namespace loopr::manager {

class PlanLocks {
 public:
  explicit PlanLocks(net::any_io_executor ex) : ex_(std::move(ex)) {}
  PlanLocks(const PlanLocks&) = delete;
  PlanLocks& operator=(const PlanLocks&) = delete;

 private:
  struct Entry {
    explicit Entry(net::any_io_executor ex) : mutex(std::move(ex)) {}
    AsyncMutex mutex;
    int users = 0;        ///< holding or waiting
    int completions = 0;  ///< of which loop completions (on_complete)
  };

  /// A use of a plan's entry: made before the wait, so the entry outlives every waiter.
  class Use {
   public:
    Use(PlanLocks& owner, std::string plan, bool completion)
        : owner_(&owner), plan_(std::move(plan)), completion_(completion) {
      auto& slot = owner_->locks_[plan_];
      if (!slot) slot = std::make_unique<Entry>(owner_->ex_);
      entry_ = slot.get();
      ++entry_->users;
      if (completion_) ++entry_->completions;
    }
    Use(Use&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)),
          plan_(std::move(other.plan_)),
          entry_(other.entry_),
          completion_(other.completion_) {}
    Use& operator=(Use&&) = delete;
    ~Use() {
      if (!owner_) return;
      if (completion_) --entry_->completions;
      if (--entry_->users == 0) owner_->locks_.erase(plan_);
    }
    AsyncMutex& mutex() const { return entry_->mutex; }

   private:
    PlanLocks* owner_;
    std::string plan_;
    Entry* entry_;
    bool completion_;
  };

 public:
  /// Held for one plan; released (and the plan's entry dropped when no one waits) at its end.
  class Guard {
   public:
    Guard(Use use, AsyncMutex::Guard held) : use_(std::move(use)), held_(std::move(held)) {}

   private:
    Use use_;                 // destroyed last: the entry outlives the release below
    AsyncMutex::Guard held_;  // destroyed first: the next waiter of this plan is granted
  };

  /// Waits for `plan`'s lock (FIFO among the waiters of that plan only).
  awaitable<Guard> lock(std::string plan) { return take(std::move(plan), false); }
  /// The same, for a loop's completion: counted until the guard is released (`completions`).
  awaitable<Guard> lock_for_completion(std::string plan) { return take(std::move(plan), true); }

  /// The completions of `plan` that hold or wait for its lock. A completion that sees another
  /// one behind it leaves the tree's check to that one (it checks after its own merge), so a
  /// tree whose loops end together is read once, not once per loop.
  int completions(const std::string& plan) const {
    auto it = locks_.find(plan);
    return it == locks_.end() ? 0 : it->second->completions;
  }

  /// Plans whose lock is held or waited for.
  std::size_t size() const { return locks_.size(); }

 private:
  awaitable<Guard> take(std::string plan, bool completion) {
    Use use(*this, std::move(plan), completion);
    AsyncMutex::Guard held = co_await use.mutex().lock();
    co_return Guard(std::move(use), std::move(held));
  }

  net::any_io_executor ex_;
  std::map<std::string, std::unique_ptr<Entry>> locks_;
};

}  // namespace loopr::manager
