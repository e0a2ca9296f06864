// The control API's request bodies: one writer and one shape-checking reader each
// (include/loopr/api/requests.hpp). The readers' messages are the daemon's 400 answers.
#include <utility>

#include <loopr/api/requests.hpp>

namespace loopr::api {

using json = nlohmann::json;

namespace {

Error bad(std::string message) {
  return make_error(ErrorCode::invalid_argument, std::move(message));
}

// The field `key`, or null when missing.
const json& field(const json& body, const char* key) {
  static const json none;
  if (!body.is_object()) return none;
  auto it = body.find(key);
  return it != body.end() ? *it : none;
}

// A string field: missing or null is empty; anything else but a string is refused.
Result<std::string> text(const json& body, const char* key) {
  const json& v = field(body, key);
  if (v.is_null()) return std::string();
  if (!v.is_string()) return bad(std::string("`") + key + "` must be a string");
  return v.get<std::string>();
}

// A boolean flag: true only when it is `true` (any other value is false, as the daemon always
// read these).
bool flag(const json& body, const char* key) {
  const json& v = field(body, key);
  return v.is_boolean() && v.get<bool>();
}

// A flag and a text field (gc's dry_run and older_than, shutdown's drain and timeout).
Result<std::pair<bool, std::string>> flag_and_text(const json& body, const char* flag_key,
                                                   const char* text_key) {
  auto t = text(body, text_key);
  if (!t) return t.take_error();
  return std::pair{flag(body, flag_key), std::move(*t)};
}

}  // namespace

json to_json(const LimitsRequest& r) {
  json out = json::object();
  if (r.max_cost_usd) out["max_cost_usd"] = *r.max_cost_usd;
  if (r.max_runtime) out["max_runtime"] = *r.max_runtime;
  if (r.max_iterations) out["max_iterations"] = *r.max_iterations;
  return out;
}

Result<LimitsRequest> limits_request_from_json(const json& body) {
  LimitsRequest r;
  if (const json& v = field(body, "max_cost_usd"); !v.is_null()) {
    if (!v.is_number() || v.get<double>() <= 0)
      return bad("`max_cost_usd` must be a number above 0 (US dollars)");
    r.max_cost_usd = v.get<double>();
  }
  auto runtime = text(body, "max_runtime");
  if (!runtime) return runtime.take_error();
  if (!runtime->empty()) r.max_runtime = std::move(*runtime);
  if (const json& v = field(body, "max_iterations"); !v.is_null()) {
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 100000)
      return bad("`max_iterations` must be a whole number from 1");
    r.max_iterations = v.get<long long>();
  }
  return r;
}

json to_json(const PlanRequest& r) {
  json out = to_json(r.limits);
  out["request"] = r.request;
  if (r.dry_run) out["dry_run"] = true;
  return out;
}

Result<PlanRequest> plan_request_from_json(const json& body) {
  PlanRequest r;
  const json& request = field(body, "request");
  if (!request.is_string())
    return bad("the body needs a string field `request` (the feature to build)");
  r.request = request.get<std::string>();
  r.dry_run = flag(body, "dry_run");
  auto limits = limits_request_from_json(body);
  if (!limits) return limits.take_error();
  r.limits = std::move(*limits);
  return r;
}

json to_json(const RejectRequest& r) {
  json out = json::object();
  if (!r.reason.empty()) out["reason"] = r.reason;
  return out;
}

Result<RejectRequest> reject_request_from_json(const json& body) {
  auto reason = text(body, "reason");
  if (!reason) return reason.take_error();
  return RejectRequest{std::move(*reason)};
}

json to_json(const AnswerRequest& r) { return {{"text", r.text}}; }

Result<AnswerRequest> answer_request_from_json(const json& body) {
  auto answer = text(body, "text");
  if (!answer) return answer.take_error();
  if (answer->find_first_not_of(" \t\r\n") == std::string::npos)
    return bad("the body needs a non-empty string field `text` (the answer)");
  return AnswerRequest{std::move(*answer)};
}

json to_json(const GcRequest& r) {
  json out = {{"dry_run", r.dry_run}};
  if (!r.older_than.empty()) out["older_than"] = r.older_than;
  return out;
}

Result<GcRequest> gc_request_from_json(const json& body) {
  auto f = flag_and_text(body, "dry_run", "older_than");
  if (!f) return f.take_error();
  return GcRequest{f->first, std::move(f->second)};
}

json to_json(const WebRequest& r) { return {{"port", r.port}}; }

Result<WebRequest> web_request_from_json(const json& body) {
  WebRequest r;
  if (const json& v = field(body, "port"); !v.is_null()) {
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 65535)
      return bad("`port` must be a number from 0 to 65535");
    r.port = static_cast<int>(v.get<long long>());
  }
  return r;
}

json to_json(const ShutdownRequest& r) {
  json out = json::object();
  if (r.drain) out["drain"] = true;
  if (!r.timeout.empty()) out["timeout"] = r.timeout;
  return out;
}

Result<ShutdownRequest> shutdown_request_from_json(const json& body) {
  auto f = flag_and_text(body, "drain", "timeout");
  if (!f) return f.take_error();
  return ShutdownRequest{f->first, std::move(f->second)};
}

}  // namespace loopr::api
