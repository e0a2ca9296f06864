// JSON encodings of the store's records.
#include <loopr/store/task_store.hpp>

namespace loopr {

nlohmann::json to_json(const IterationRecord& r) {
  nlohmann::json j = {
      {"loop_id", r.loop_id},
      {"n", r.n},
      {"status", to_string(r.status)},
      {"exit_code", r.exit_code ? nlohmann::json(*r.exit_code) : nlohmann::json(nullptr)},
      {"input_tokens", r.usage.input_tokens},
      {"output_tokens", r.usage.output_tokens},
      {"cache_read_tokens", r.usage.cache_read_tokens},
      {"cache_write_tokens", r.usage.cache_write_tokens},
      {"cost_usd", r.usage.cost_usd},
      {"duration_ms", r.duration_ms},
      {"summary", r.summary},
      {"output_excerpt", r.output_excerpt},
      {"started_at", r.started_at},
      {"finished_at", r.finished_at},
      {"details", r.details},
  };
  return j;
}

Result<IterationRecord> iteration_from_json(const nlohmann::json& j) {
  try {
    IterationRecord r;
    r.loop_id = j.at("loop_id").get<std::string>();
    r.n = j.at("n").get<int>();
    r.status = parse_iteration_outcome(j.value("status", ""));
    if (j.contains("exit_code") && !j["exit_code"].is_null()) r.exit_code = j["exit_code"].get<int>();
    r.usage.input_tokens = j.value("input_tokens", std::int64_t{0});
    r.usage.output_tokens = j.value("output_tokens", std::int64_t{0});
    r.usage.cache_read_tokens = j.value("cache_read_tokens", std::int64_t{0});
    r.usage.cache_write_tokens = j.value("cache_write_tokens", std::int64_t{0});
    r.usage.cost_usd = j.value("cost_usd", 0.0);
    r.duration_ms = j.value("duration_ms", std::int64_t{0});
    r.summary = j.value("summary", "");
    r.output_excerpt = j.value("output_excerpt", "");
    r.started_at = j.value("started_at", TimestampMs{0});
    r.finished_at = j.value("finished_at", TimestampMs{0});
    r.details = j.value("details", nlohmann::json::object());
    return r;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::invalid_argument, std::string("malformed iteration record: ") + e.what());
  }
}

nlohmann::json to_json(const Approval& a) {
  return {{"loop_id", a.loop_id}, {"decision", a.decision}, {"text", a.text}, {"at", a.at}};
}

}  // namespace loopr
