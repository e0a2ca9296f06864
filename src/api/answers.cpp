// The plan and web routes' answers: one writer and one reader each (include/loopr/api/answers.hpp).
#include <loopr/api/answers.hpp>

#include "api/json_read.hpp"

namespace loopr::api {

using json = nlohmann::json;

// (read:: finds nothing in a value that is not an object: each field reads as its default.)

json to_json(const ErrorView& v) { return {{"error", v.error}}; }

ErrorView error_from_json(const json& j) { return {read::str(j, "error")}; }

json to_json(const PlanCreated& v) { return {{"id", v.id}}; }

PlanCreated plan_created_from_json(const json& j) { return {read::str(j, "id")}; }

json to_json(const MergeView& v) {
  json out = {{"id", v.id}, {"merged", v.merged}, {"sha", v.sha}, {"base_branch", v.base_branch}};
  if (v.pr)
    out["pr"] = {
        {"number", v.pr->number},
        {"url", v.pr->url},
        {"state", v.pr->state == PullRequestState::none ? "open" : to_string(v.pr->state)}};
  return out;
}

MergeView merge_from_json(const json& j) {
  MergeView v;
  if (!j.is_object()) return v;
  v.id = read::str(j, "id");
  v.merged = read::flag(j, "merged");
  v.sha = read::str(j, "sha");
  v.base_branch = read::str(j, "base_branch");
  if (const json& pr = read::sub(j, "pr"); pr.is_object()) {
    MergedPr p;
    p.number = read::i32(pr, "number");
    p.url = read::str(pr, "url");
    // An older daemon wrote no state: it was open. A word this loopr does not know: none.
    const std::string state = read::str(pr, "state");
    p.state = state.empty() ? PullRequestState::open : parse_pull_request_state(state);
    v.pr = std::move(p);
  }
  return v;
}

json to_json(const PrCommentsView& v) {
  json list = json::array();
  for (const PrReviewComment& c : v.comments)
    list.push_back({{"path", c.path},
                    {"line", c.line},
                    {"author", c.author},
                    {"body", c.body},
                    {"created_at", c.created_at},
                    {"url", c.url}});
  return {{"id", v.id}, {"comments", std::move(list)}};
}

PrCommentsView pr_comments_from_json(const json& j) {
  PrCommentsView v;
  if (!j.is_object()) return v;
  v.id = read::str(j, "id");
  if (const json& list = read::sub(j, "comments"); list.is_array())
    for (const json& c : list) {
      if (!c.is_object()) continue;
      v.comments.push_back({read::str(c, "path"), read::i32(c, "line"), read::str(c, "author"),
                            read::str(c, "body"), read::str(c, "created_at"), read::str(c, "url")});
    }
  return v;
}

json to_json(const WebStarted& v) {
  return {{"url", v.url}, {"port", v.port}, {"started", v.started}};
}

WebStarted web_started_from_json(const json& j) {
  return {read::str(j, "url"), read::i32(j, "port"), read::flag(j, "started")};
}

json to_json(const WebStopped& v) { return {{"stopped", v.stopped}}; }

WebStopped web_stopped_from_json(const json& j) { return {read::flag(j, "stopped")}; }

}  // namespace loopr::api
