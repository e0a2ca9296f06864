// The answers of the plan and web routes, typed, and the error every route answers with:
// `POST /v1/plans` (the new plan's id),
// `POST /v1/plans/{id}/merge`, `GET /v1/plans/{id}/pr/comments`, `POST /v1/web` and
// `POST /v1/web/stop`. The daemon writes them with `to_json`, the CLI and the web page read them
// with the `*_from_json` readers: one codec each way, keeping the JSON as src/daemon/API.md has
// it; reading never throws (a missing or mistyped field reads as its default).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/loop_marks.hpp>

namespace loopr::api {

/// `POST /v1/plans` → 201 `{"id"}`.
struct PlanCreated {
  std::string id;
};

/// merge: pr: the pull request `loopr merge` pushed to (or found).
struct MergedPr {
  int number = 0;
  std::string url;
  PullRequestState state = PullRequestState::open;
};

/// `POST /v1/plans/{id}/merge`: merged into the base branch (`merged`), or under `merge: pr`
/// pushed again with its pull request (`pr`, and `merged` false).
struct MergeView {
  std::string id;
  bool merged = false;
  std::string sha, base_branch;
  std::optional<MergedPr> pr;
};

/// One review comment on a plan's pull request, as the forge gave it.
struct PrReviewComment {
  std::string path;
  int line = 0;  ///< 0: on the file (or an outdated line)
  std::string author, body;
  std::string created_at;  ///< ISO 8601, as the forge wrote it
  std::string url;
};

/// `GET /v1/plans/{id}/pr/comments`: the review comments since the plan's last push.
struct PrCommentsView {
  std::string id;
  std::vector<PrReviewComment> comments;
};

/// `POST /v1/web`: where the web UI serves (`started` false: it already did).
struct WebStarted {
  std::string url;
  int port = 0;
  bool started = false;
};

/// `POST /v1/web/stop` (`stopped` false: it was not serving).
struct WebStopped {
  bool stopped = false;
};

/// Every refused or failed request: `{"error":"what went wrong (what to do)"}`.
struct ErrorView {
  std::string error;
};

nlohmann::json to_json(const ErrorView& v);
ErrorView error_from_json(const nlohmann::json& j);
nlohmann::json to_json(const PlanCreated& v);
PlanCreated plan_created_from_json(const nlohmann::json& j);
nlohmann::json to_json(const MergeView& v);
MergeView merge_from_json(const nlohmann::json& j);
nlohmann::json to_json(const PrCommentsView& v);
PrCommentsView pr_comments_from_json(const nlohmann::json& j);
nlohmann::json to_json(const WebStarted& v);
WebStarted web_started_from_json(const nlohmann::json& j);
nlohmann::json to_json(const WebStopped& v);
WebStopped web_stopped_from_json(const nlohmann::json& j);

}  // namespace loopr::api
