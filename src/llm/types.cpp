#include <loopr/llm/types.hpp>

#include <loopr/core/enum_texts.hpp>

namespace loopr::llm {

ContentBlock ContentBlock::make_text(std::string text) {
  ContentBlock b;
  b.type = Type::text;
  b.text = std::move(text);
  return b;
}

ContentBlock ContentBlock::make_tool_use(std::string id, std::string name, nlohmann::json input) {
  ContentBlock b;
  b.type = Type::tool_use;
  b.id = std::move(id);
  b.name = std::move(name);
  b.input = std::move(input);
  return b;
}

ContentBlock ContentBlock::make_tool_result(std::string tool_use_id, std::string content,
                                            bool is_error) {
  ContentBlock b;
  b.type = Type::tool_result;
  b.id = std::move(tool_use_id);
  b.text = std::move(content);
  b.is_error = is_error;
  return b;
}

Message Message::user_text(std::string text) {
  return Message{Role::user, {ContentBlock::make_text(std::move(text))}};
}

namespace {
constexpr EnumText<StopReason> kStopNames[] = {
    {StopReason::end_turn, "end_turn"},
    {StopReason::tool_use, "tool_use"},
    {StopReason::max_tokens, "max_tokens"},
    {StopReason::stop_sequence, "stop_sequence"},
    {StopReason::pause_turn, "pause_turn"},
    {StopReason::refusal, "refusal"},
    {StopReason::model_context_window_exceeded, "model_context_window_exceeded"},
};
}  // namespace

const char* to_string(StopReason reason) { return text_of(kStopNames, reason, "unknown"); }

StopReason parse_stop_reason(std::string_view text) {
  return value_of(kStopNames, text, StopReason::unknown);
}

std::string Response::text() const {
  std::string out;
  for (const auto& b : content)
    if (b.type == ContentBlock::Type::text) out += b.text;
  return out;
}

std::vector<const ContentBlock*> Response::tool_uses() const {
  std::vector<const ContentBlock*> out;
  for (const auto& b : content)
    if (b.type == ContentBlock::Type::tool_use) out.push_back(&b);
  return out;
}

Message Response::to_message() const { return Message{Role::assistant, content}; }

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::rate_limited:
      return "rate_limited";
    case ErrorKind::overloaded:
      return "overloaded";
    case ErrorKind::server:
      return "server";
    case ErrorKind::timeout:
      return "timeout";
    case ErrorKind::network:
      return "network";
    case ErrorKind::protocol:
      return "protocol";
    case ErrorKind::auth:
      return "auth";
    case ErrorKind::billing:
      return "billing";
    case ErrorKind::permission:
      return "permission";
    case ErrorKind::not_found:
      return "not_found";
    case ErrorKind::invalid_request:
      return "invalid_request";
    case ErrorKind::spend_limit:
      return "spend_limit";
    case ErrorKind::tls:
      return "tls";
    case ErrorKind::process:
      return "process";
    case ErrorKind::cancelled:
      return "cancelled";
  }
  return "unknown";
}

std::string LlmError::describe() const {
  if (request_id.empty()) return message;
  return message + " [request-id " + request_id + "]";
}

Error LlmError::to_error() const {
  ErrorCode code = ErrorCode::io;
  if (kind == ErrorKind::timeout)
    code = ErrorCode::timeout;
  else if (kind == ErrorKind::cancelled)
    code = ErrorCode::cancelled;
  else if (kind == ErrorKind::invalid_request)
    code = ErrorCode::invalid_argument;
  return Error{code, describe()};
}

}  // namespace loopr::llm
