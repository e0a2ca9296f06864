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

std::string submit_request(const DaemonClient& api, const api::PlanRequest& request) {
  api::PlanCreated made = api::plan_created_from_json(api.post("/v1/plans", api::to_json(request)));
  if (made.id.empty())
    throw CommandError{kFailed, "the daemon answered without an id", "see .loopr/logs/daemon.out"};
  return made.id;
}

MergeAnswer merge_plan(const DaemonClient& api, const std::string& plan_id, bool force) {
  MergeAnswer out;
  out.document = api.post("/v1/plans/" + url_encode(plan_id) + "/merge" + (force ? "?force=1" : ""),
                          nullptr, std::chrono::hours(24));
  out.view = api::merge_from_json(out.document);
  return out;
}

api::PrCommentsView pr_comments(const DaemonClient& api, const std::string& plan_id) {
  return api::pr_comments_from_json(api.get("/v1/plans/" + url_encode(plan_id) + "/pr/comments"));
}

api::WebStarted start_web(const DaemonClient& api, int port) {
  return api::web_started_from_json(api.post("/v1/web", api::to_json(api::WebRequest{port})));
}

bool stop_web(const DaemonClient& api) {
  return api::web_stopped_from_json(api.post("/v1/web/stop")).stopped;
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
