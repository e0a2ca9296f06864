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

/// An event for `loop_id` of `type` with `data` (time and seq are set when stored).
inline Event make_event(std::string loop_id, std::string type, nlohmann::json data = nlohmann::json::object()) {
  Event e;
  e.loop_id = std::move(loop_id);
  e.type = std::move(type);
  e.data = std::move(data);
  return e;
}

}  // namespace loopr::engine
