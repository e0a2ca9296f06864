// What every HTTP wire shares: the request's envelope (headers, body) and reading a body as a
// JSON object.
#include <loopr/core/text.hpp>

#include "llm/wire.hpp"

namespace loopr::llm {

HttpRequest json_request(std::string target, const Request& request, bool stream,
                         const nlohmann::json& body,
                         std::vector<std::pair<std::string, std::string>> extra_headers) {
  HttpRequest http;
  http.target = std::move(target);
  http.headers.emplace_back("content-type", "application/json");
  http.headers.emplace_back("user-agent", "loopr/0.1");
  // DESIGN.md: every request names its loop, so gateways can attribute usage and scripted
  // servers can answer per loop.
  http.headers.emplace_back("x-loopr-loop-id", request.loop_id);
  http.headers.emplace_back("x-loopr-loop-type", request.loop_type);
  http.headers.emplace_back("accept", stream ? "text/event-stream" : "application/json");
  for (auto& h : extra_headers) http.headers.push_back(std::move(h));
  http.body = json_text(body);
  return http;
}

std::vector<std::pair<std::string, std::string>> bearer(const std::string& key) {
  if (key.empty()) return {};
  return {{"authorization", "Bearer " + key}};
}

std::optional<LlmError> refuse_unless_user_last(const Request& request) {
  if (!request.messages.empty() && request.messages.back().role == Role::user) return std::nullopt;
  LlmError e;
  e.kind = ErrorKind::invalid_request;
  e.message =
      "loopr refused to send a malformed request (a bug in loopr): the last message must be "
      "from the user";
  return e;
}

std::variant<nlohmann::json, LlmError> json_object_body(const std::string& provider,
                                                        std::string_view body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return protocol_error(provider, "a body that is not JSON: " + std::string(body.substr(0, 200)));
  return j;
}

}  // namespace loopr::llm
