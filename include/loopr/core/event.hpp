// Events: what happened to a loop, in order. The store numbers them (monotonic `seq`); the daemon
// streams them (`GET /v1/events`), `loopr logs` prints them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include <loopr/core/loop.hpp>

namespace loopr {

struct Event {
  std::uint64_t seq = 0;        ///< assigned by the store; 0 before it is stored
  TimestampMs time = 0;
  std::string loop_id;          ///< empty for daemon-wide events
  std::string type;             ///< iteration_started, tool_called, status_changed, cost, …
  nlohmann::json data = nlohmann::json::object();
};

nlohmann::json to_json(const Event& event);
Result<Event> event_from_json(const nlohmann::json& json);

}  // namespace loopr
