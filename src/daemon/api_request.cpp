// Reading the control API's requests: the JSON body, its fields, a loop id, a plan's limits; and
// an Error from the manager or the store as its HTTP answer.
#include <loopr/core/budget.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/daemon/http_common.hpp>

#include "daemon/api_routes.hpp"

namespace loopr::daemon {

int http_status(const Error& error) {
  switch (error.code) {
    case ErrorCode::not_found:
      return 404;
    case ErrorCode::illegal_transition:
    case ErrorCode::conflict:
    case ErrorCode::already_exists:
      return 409;
    case ErrorCode::invalid_argument:
      return 400;
    case ErrorCode::unsupported:
      return 503;
    default:
      return 500;
  }
}

Response error_of(const Error& e) {
  std::string msg = e.message;
  if (e.code == ErrorCode::not_found && msg.find("(") == std::string::npos)
    msg += " (see `loopr list --all`)";
  return error_response(http_status(e), msg);
}

// The body as a JSON object (an empty body is `{}`); nullopt + a 400 response if it is not one.
std::optional<nlohmann::json> body_object(const Request& req, Response& bad) {
  if (req.body.find_first_not_of(" \t\r\n") == std::string::npos) return nlohmann::json::object();
  auto j = nlohmann::json::parse(req.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    bad = error_response(
        400, "the request body is not a JSON object (send e.g. {\"request\": \"...\"})");
    return std::nullopt;
  }
  return j;
}

std::optional<std::string> string_field(const nlohmann::json& body, const char* key,
                                        Response& bad) {
  if (!body.contains(key) || body[key].is_null()) return std::string();
  if (!body[key].is_string()) {
    bad = error_response(400, std::string("`") + key + "` must be a string");
    return std::nullopt;
  }
  return body[key].get<std::string>();
}

bool valid_id(const std::string& id) { return type_of_id(id).has_value(); }

// The limits' shapes were checked by api::limits_request_from_json; here, what they mean.
std::optional<RequestBudget> budget_of(const api::LimitsRequest& limits, Response& bad) {
  RequestBudget b;
  if (limits.max_cost_usd) b.max_cost_usd = *limits.max_cost_usd;
  if (limits.max_runtime) {
    auto d = parse_duration(*limits.max_runtime);
    if (!d || d->count() <= 0) {
      bad = error_response(400, "`max_runtime` must be a duration such as 2h or 90m");
      return std::nullopt;
    }
    b.max_runtime = *d;
  }
  if (limits.max_iterations) b.max_iterations = static_cast<int>(*limits.max_iterations);
  return b;
}

}  // namespace loopr::daemon
