// Turning what went wrong on the wire into an LlmError a person can act on (WIRE.md §1, §2:
// which statuses are retried, which are fatal, whose wait wins).
#include <loopr/llm/retry.hpp>

#include "llm/wire.hpp"

namespace loopr::llm {

namespace {

struct ErrorBody {
  std::string type, message, code, request_id;
};

/// Reads `{"type":"error","error":{type,message,details:{error_code}},"request_id"}`
/// (Anthropic) or `{"error":{message,type,param,code}}` (OpenAI); anything else is kept as text.
ErrorBody parse_error_body(std::string_view body) {
  ErrorBody out;
  auto j = nlohmann::json::parse(body, nullptr, false);
  auto str = [](const nlohmann::json& o, const char* key) -> std::string {
    if (!o.is_object()) return {};
    auto it = o.find(key);
    if (it == o.end()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number()) return it->dump();
    return {};
  };
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const auto& e = j["error"];
    out.type = str(e, "type");
    out.message = str(e, "message");
    out.code = str(e, "code");
    if (e.contains("details")) out.code = str(e["details"], "error_code");
    out.request_id = str(j, "request_id");
  } else if (j.is_object() && j.contains("error") && j["error"].is_string()) {
    out.message = j["error"].get<std::string>();  // some local servers
  } else {
    constexpr std::size_t kMaxQuoted = 300;
    out.message = std::string(body.substr(0, kMaxQuoted));
  }
  return out;
}

std::string with_detail(std::string head, const ErrorBody& body) {
  if (!body.message.empty()) head += ": " + body.message;
  return head;
}

}  // namespace

LlmError classify_http_error(const HttpHead& head, std::string_view body,
                             const std::string& provider, const WireSettings& settings,
                             std::string_view request_id_header) {
  ErrorBody eb = parse_error_body(body);
  LlmError e;
  e.http_status = head.status;
  e.type = eb.type;
  e.error_code = eb.code;
  if (auto rid = head.header(request_id_header)) e.request_id = *rid;
  if (e.request_id.empty()) e.request_id = eb.request_id;
  const int s = head.status;
  const std::string status = std::to_string(s) + (eb.type.empty() ? "" : " " + eb.type);

  if (s == 401) {
    e.kind = ErrorKind::auth;
    e.message = with_detail(settings.key_env + " is missing or was refused (401)", eb);
  } else if (s == 402) {
    e.kind = ErrorKind::billing;
    e.message = with_detail("the " + provider + " account has a billing problem (402)", eb);
  } else if (s == 403) {
    e.kind = ErrorKind::permission;
    e.message = with_detail(settings.key_env + " may not use this (403)", eb);
  } else if (s == 404) {
    e.kind = ErrorKind::not_found;
    e.message = with_detail("model '" + settings.model +
                                "' or the API endpoint was not found "
                                "(404); check llm.model and llm.base_url",
                            eb);
  } else if (s == 413) {
    e.kind = ErrorKind::invalid_request;
    e.message = with_detail("the request is too large for " + provider + " (413)", eb);
  } else if (s == 429 && eb.code == "enforced_spend_limit_reached") {
    e.kind = ErrorKind::spend_limit;
    e.message = with_detail("the " + provider + " spend limit is reached (429 " + eb.code +
                                "); raise the limit to go on",
                            eb);
  } else if (s == 429) {
    e.kind = ErrorKind::rate_limited;
    e.retryable = true;
    e.message = with_detail(provider + " rate limit reached (" + status + ")", eb);
  } else if (s == 529 || eb.type == "overloaded_error") {
    e.kind = ErrorKind::overloaded;
    e.retryable = true;
    e.message = with_detail(provider + " is overloaded (" + status + ")", eb);
  } else if (s == 408 || s == 409 || s >= 500) {
    e.kind = ErrorKind::server;
    e.retryable = true;
    e.message = with_detail(provider + " server error (" + status + ")", eb);
  } else {
    e.kind = ErrorKind::invalid_request;
    e.message = with_detail(provider + " refused the request (" + status + ")", eb);
  }

  // The server knows best whether a retry can help (ASDK lets the header win); a reached spend
  // limit stays fatal whatever it says, as WIRE.md asks.
  if (auto h = head.header("x-should-retry"); h && e.kind != ErrorKind::spend_limit)
    if (auto should = parse_should_retry(*h)) e.retryable = *should;
  if (e.retryable) {
    if (auto h = head.header("retry-after-ms")) e.retry_after = parse_retry_after_ms(*h);
    if (!e.retry_after)
      if (auto h = head.header("retry-after")) e.retry_after = parse_retry_after(*h);
  }
  return e;
}

LlmError classify_transport_failure(const HttpFailure& failure, const std::string& provider) {
  using Kind = HttpFailure::Kind;
  LlmError e;
  e.retryable = true;
  switch (failure.kind) {
    case Kind::connect_timeout:
    case Kind::first_byte_timeout:
    case Kind::idle_timeout:
      e.kind = ErrorKind::timeout;
      break;
    case Kind::tls_refused:
      e.kind = ErrorKind::tls;
      e.retryable = false;  // a certificate does not become trusted by asking again
      break;
    case Kind::bad_response:
      e.kind = ErrorKind::protocol;
      break;
    case Kind::connect_failed:
    case Kind::tls_failed:
    case Kind::connection_lost:
      e.kind = ErrorKind::network;
      break;
  }
  e.type = to_string(e.kind);
  e.message = provider + ": " + failure.message;
  return e;
}

LlmError protocol_error(const std::string& provider, const std::string& what) {
  LlmError e;
  e.kind = ErrorKind::protocol;
  e.retryable = true;  // a garbled answer is usually a proxy or server hiccup
  e.type = "protocol";
  e.message = provider + " sent a malformed response: " + what;
  return e;
}

}  // namespace loopr::llm
