#include <loopr/core/event.hpp>

namespace loopr {

nlohmann::json to_json(const Event& e) {
  return {{"seq", e.seq}, {"time", format_timestamp(e.time)}, {"loop_id", e.loop_id}, {"type", e.type}, {"data", e.data}};
}

Result<Event> event_from_json(const nlohmann::json& j) {
  try {
    Event e;
    e.seq = j.at("seq").get<std::uint64_t>();
    auto t = parse_timestamp(j.at("time").get<std::string>());
    if (!t) return make_error(ErrorCode::invalid_argument, "event has a bad time");
    e.time = *t;
    e.loop_id = j.value("loop_id", "");
    e.type = j.at("type").get<std::string>();
    e.data = j.value("data", nlohmann::json::object());
    return e;
  } catch (const nlohmann::json::exception& ex) {
    return make_error(ErrorCode::invalid_argument, std::string("malformed event: ") + ex.what());
  }
}

}  // namespace loopr
