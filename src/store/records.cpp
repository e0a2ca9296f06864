// JSON encodings of the store's records.
#include <type_traits>

#include <loopr/store/task_store.hpp>

namespace loopr {

using nlohmann::json;

namespace {

// `j[key]` into `out` when it has out's type; left as it is otherwise.
template <typename T>
void take(const json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return;
  if constexpr (std::is_same_v<T, bool>) {
    if (it->is_boolean()) out = it->get<bool>();
  } else if constexpr (std::is_arithmetic_v<T>) {
    if (it->is_number()) out = it->get<T>();
  } else {
    if (it->is_string()) out = it->get<std::string>();
  }
}

void take(const json& j, const char* key, std::optional<double>& out) {
  if (auto it = j.find(key); it != j.end() && it->is_number()) out = it->get<double>();
}

}  // namespace

json to_json(const IterationDetails& d) {
  json j = d.other.is_object() ? d.other : json::object();
  j.update(json{{"turns", d.turns},
                {"tool_calls", d.tool_calls},
                {"end", d.end},
                {"commit", d.commit},
                {"validation_command", d.validation_command},
                {"model_ms", d.model_ms},
                {"validation_ms", d.validation_ms},
                {"state_ms", d.state_ms},
                {"checkpoint_ms", d.checkpoint_ms},
                {"timed_out", d.timed_out}});
  if (d.uncached_cost_usd) j["uncached_cost_usd"] = *d.uncached_cost_usd;
  if (!d.end_reason.empty()) j["end_reason"] = d.end_reason;
  if (d.notional_cost_usd) j["notional_cost_usd"] = *d.notional_cost_usd;
  if (!d.protected_files.empty()) {
    json files = json::array();
    for (const ProtectedChange& p : d.protected_files)
      files.push_back({{"path", p.path}, {"change", p.change}, {"role", p.role}});
    j["protected"] = std::move(files);
  }
  if (const auto& r = d.review)
    j["review"] = {{"verdict", r->verdict},
                   {"summary", r->summary},
                   {"model", r->model},
                   {"cost_usd", r->cost_usd},
                   {"attempts", r->attempts},
                   {"input_tokens", r->input_tokens},
                   {"output_tokens", r->output_tokens}};
  if (!d.jobs.empty()) j["jobs"] = d.jobs;
  return j;
}

IterationDetails iteration_details_from_json(const json& j) {
  IterationDetails d;
  if (!j.is_object()) return d;
  take(j, "turns", d.turns);
  take(j, "tool_calls", d.tool_calls);
  take(j, "end", d.end);
  take(j, "commit", d.commit);
  take(j, "validation_command", d.validation_command);
  take(j, "model_ms", d.model_ms);
  take(j, "validation_ms", d.validation_ms);
  take(j, "state_ms", d.state_ms);
  take(j, "checkpoint_ms", d.checkpoint_ms);
  take(j, "uncached_cost_usd", d.uncached_cost_usd);
  take(j, "timed_out", d.timed_out);
  take(j, "end_reason", d.end_reason);
  take(j, "notional_cost_usd", d.notional_cost_usd);
  if (auto p = j.find("protected"); p != j.end() && p->is_array())
    for (const json& f : *p) {
      if (!f.is_object()) continue;
      ProtectedChange c;
      take(f, "path", c.path);
      take(f, "change", c.change);
      take(f, "role", c.role);
      d.protected_files.push_back(std::move(c));
    }
  if (auto r = j.find("review"); r != j.end() && r->is_object()) {
    ReviewReceipt rr;
    take(*r, "verdict", rr.verdict);
    take(*r, "summary", rr.summary);
    take(*r, "model", rr.model);
    take(*r, "cost_usd", rr.cost_usd);
    take(*r, "attempts", rr.attempts);
    take(*r, "input_tokens", rr.input_tokens);
    take(*r, "output_tokens", rr.output_tokens);
    d.review = std::move(rr);
  }
  if (auto jobs = j.find("jobs"); jobs != j.end() && jobs->is_array())
    for (const json& id : *jobs)
      if (id.is_string()) d.jobs.push_back(id.get<std::string>());
  // What was not read (another loopr's keys, a field of another type) is kept as it was.
  const json read = to_json(d);
  d.other = j;
  for (const auto& [key, value] : read.items()) d.other.erase(key);
  return d;
}

json to_json(const IterationRecord& r) {
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
      {"details", to_json(r.details)},
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
    if (auto d = j.find("details"); d != j.end()) r.details = iteration_details_from_json(*d);
    return r;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::invalid_argument, std::string("malformed iteration record: ") + e.what());
  }
}

nlohmann::json to_json(const Approval& a) {
  return {{"loop_id", a.loop_id}, {"decision", a.decision}, {"text", a.text}, {"at", a.at}};
}

}  // namespace loopr
