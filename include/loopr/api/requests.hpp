// The control API's request bodies, typed: what `loopr submit`, `reject`, `answer`, `resume`,
// `gc`, `web` and `daemon stop` (and the web page's forms) send, with ONE writer (`to_json`, the
// CLI and the web page) and ONE reader (`*_request_from_json`, the daemon), keeping the JSON as
// src/daemon/API.md has it. A reader takes the body as a JSON object and checks each field's
// shape: a field of the wrong type is an `invalid_argument` error whose message is the 400 the
// daemon answers; a missing or null field is its default. What a value means (is `max_runtime` a
// duration?) is the daemon's to check. `IterateRequest` is in comments.hpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include <loopr/core/result.hpp>

namespace loopr::api {

/// A plan's own limits (`POST /v1/plans`, and `resume` raising them): each unset is left out.
struct LimitsRequest {
  std::optional<double> max_cost_usd;       ///< above 0
  std::optional<std::string> max_runtime;   ///< a duration, e.g. `2h`
  std::optional<long long> max_iterations;  ///< from 1
};

/// `POST /v1/plans`: the feature to build (`dry_run`: the plan stops at its forecast).
struct PlanRequest {
  std::string request;
  bool dry_run = false;
  LimitsRequest limits;
};

/// `POST /v1/loops/{id}/reject` (an empty reason is left out).
struct RejectRequest {
  std::string reason;
};

/// `POST /v1/loops/{id}/answer`: the answer to the loop's question (not blank).
struct AnswerRequest {
  std::string text;
};

/// `POST /v1/gc` (`older_than`: a duration; empty: the config's).
struct GcRequest {
  bool dry_run = false;
  std::string older_than;
};

/// `POST /v1/web` (0: a free port).
struct WebRequest {
  int port = 0;
};

/// `POST /v1/shutdown` (`drain`: let running iterations end first, for at most `timeout`).
struct ShutdownRequest {
  bool drain = false;
  std::string timeout;
};

nlohmann::json to_json(const LimitsRequest& r);
Result<LimitsRequest> limits_request_from_json(const nlohmann::json& body);
nlohmann::json to_json(const PlanRequest& r);
Result<PlanRequest> plan_request_from_json(const nlohmann::json& body);
nlohmann::json to_json(const RejectRequest& r);
Result<RejectRequest> reject_request_from_json(const nlohmann::json& body);
nlohmann::json to_json(const AnswerRequest& r);
Result<AnswerRequest> answer_request_from_json(const nlohmann::json& body);
nlohmann::json to_json(const GcRequest& r);
Result<GcRequest> gc_request_from_json(const nlohmann::json& body);
nlohmann::json to_json(const WebRequest& r);
Result<WebRequest> web_request_from_json(const nlohmann::json& body);
nlohmann::json to_json(const ShutdownRequest& r);
Result<ShutdownRequest> shutdown_request_from_json(const nlohmann::json& body);

}  // namespace loopr::api
