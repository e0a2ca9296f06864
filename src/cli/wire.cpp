#include "cli/wire.hpp"

#include <chrono>

namespace loopr::cli {

using json = nlohmann::json;

std::vector<api::LoopRow> list_loops(const DaemonClient& api, const std::string& query) {
  return api::loop_rows_from_json(api.get("/v1/loops" + query));
}

api::LoopDetail show_loop(const DaemonClient& api, const std::string& id) {
  return api::loop_detail_from_json(api.get("/v1/loops/" + url_encode(id)));
}

api::LoopRow act_on(const DaemonClient& api, const std::string& id, const std::string& action,
                    const json& body) {
  return api::loop_row_from_json(api.post("/v1/loops/" + url_encode(id) + "/" + action, body));
}

std::string submit_request(const DaemonClient& api, const std::string& request, bool dry_run,
                           const json& fields) {
  json body = fields.is_object() ? fields : json::object();
  body["request"] = request;
  if (dry_run) body["dry_run"] = true;
  json r = api.post("/v1/plans", body);
  auto it = r.find("id");
  if (it == r.end() || !it->is_string() || it->get<std::string>().empty())
    throw CommandError{kFailed, "the daemon answered without an id", "see .loopr/logs/daemon.out"};
  return it->get<std::string>();
}

MergeAnswer merge_plan(const DaemonClient& api, const std::string& plan_id, bool force) {
  MergeAnswer out;
  out.document = api.post("/v1/plans/" + url_encode(plan_id) + "/merge" + (force ? "?force=1" : ""),
                          nullptr, std::chrono::hours(24));
  if (out.document.is_object()) {
    if (auto it = out.document.find("base_branch"); it != out.document.end() && it->is_string())
      out.base_branch = it->get<std::string>();
    if (auto it = out.document.find("sha"); it != out.document.end() && it->is_string())
      out.sha = it->get<std::string>();
    if (auto pr = out.document.find("pr"); pr != out.document.end() && pr->is_object())
      if (auto it = pr->find("state"); it != pr->end() && it->is_string())
        out.pr_state = parse_pull_request_state(it->get<std::string>());
  }
  return out;
}

WebAnswer start_web(const DaemonClient& api, int port) {
  json r = api.post("/v1/web", json{{"port", port}});
  WebAnswer out;
  if (!r.is_object()) return out;
  if (auto it = r.find("url"); it != r.end() && it->is_string()) out.url = it->get<std::string>();
  if (auto it = r.find("port"); it != r.end() && it->is_number()) out.port = it->get<int>();
  if (auto it = r.find("started"); it != r.end() && it->is_boolean()) out.started = it->get<bool>();
  return out;
}

bool stop_web(const DaemonClient& api) {
  json r = api.post("/v1/web/stop");
  auto it = r.is_object() ? r.find("stopped") : r.end();
  return r.is_object() && it != r.end() && it->is_boolean() && it->get<bool>();
}

std::optional<api::Health> daemon_health(const DaemonClient& api,
                                         std::chrono::milliseconds timeout) {
  auto h = api.health(timeout);
  if (!h) return std::nullopt;
  return api::health_from_json(*h);
}

std::optional<api::TypedEvent> event_of(const json& j) {
  auto e = event_from_json(j);
  if (!e) return std::nullopt;
  return api::decode(*e);
}

std::optional<api::TypedEvent> event_of(const StreamMessage& message) {
  json j = json::parse(message.data, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return event_of(j);
}

}  // namespace loopr::cli
