// Events go to the store (numbered, durable) and then to whoever listens live (the daemon's
// SSE streams). Publishing happens on the io thread.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include <loopr/core/event.hpp>

namespace loopr::engine {

class EventBus {
 public:
  using Subscriber = std::function<void(const Event&)>;

  int subscribe(Subscriber subscriber) {
    subscribers_[next_id_] = std::move(subscriber);
    return next_id_++;
  }
  void unsubscribe(int id) { subscribers_.erase(id); }

  /// Hands events that are already stored (they have their `seq`) to every subscriber.
  void publish(const std::vector<Event>& stored) {
    auto copy = subscribers_;  // a subscriber may unsubscribe while being called
    for (const Event& e : stored)
      for (auto& [id, s] : copy) s(e);
  }

 private:
  std::map<int, Subscriber> subscribers_;
  int next_id_ = 0;
};

// Events are made as typed bodies and encoded once: `api::encode(loop_id, api::Merged{…})`
// (include/loopr/api/events.hpp), never as a type string and JSON built where they happen.

}  // namespace loopr::engine
