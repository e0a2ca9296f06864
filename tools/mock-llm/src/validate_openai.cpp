#include <mock_llm/validate.hpp>
#include <set>

namespace loopr::mock_llm {
namespace {

using Json = nlohmann::json;

ApiError invalid(std::string message, std::string param = "") {
  return ApiError{400, "invalid_request_error", std::move(message), "", std::move(param)};
}

std::string masked(const std::string& key) {
  if (key.size() <= 8) return "****";
  return key.substr(0, 3) + "****" + key.substr(key.size() - 4);
}

std::optional<ApiError> check_tools(const Json& body) {
  if (!body.contains("tools")) return std::nullopt;
  const Json& tools = body["tools"];
  if (!tools.is_array()) return invalid("Invalid type for 'tools': expected an array.", "tools");
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const Json& t = tools[i];
    const std::string at = "tools[" + std::to_string(i) + "]";
    if (!t.is_object() || t.value("type", "") != "function")
      return invalid("Invalid value for '" + at + ".type': expected 'function'.", at + ".type");
    if (!t.contains("function") || !t["function"].is_object())
      return invalid("Missing required parameter: '" + at + ".function'.", at + ".function");
    if (!t["function"].contains("name") || !t["function"]["name"].is_string())
      return invalid("Missing required parameter: '" + at + ".function.name'.",
                     at + ".function.name");
  }
  return std::nullopt;
}

std::optional<ApiError> check_messages(const Json& messages) {
  std::set<std::string> pending;  // tool_call ids of the last assistant message not yet answered
  std::size_t pending_from = 0;
  bool in_tool_block = false;  // right after an assistant message with tool_calls
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    const std::string at = "messages.[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      return invalid("Missing required parameter: '" + at + ".role'.", at + ".role");
    const std::string role = m["role"].get<std::string>();
    if (role != "tool" && !pending.empty()) {
      std::string ids;
      for (const auto& id : pending) ids += (ids.empty() ? "" : ", ") + id;
      return invalid(
          "An assistant message with 'tool_calls' must be followed by tool messages "
          "responding to each 'tool_call_id'. The following tool_call_ids did not have "
          "response messages: " +
              ids,
          "messages.[" + std::to_string(pending_from) + "].role");
    }
    if (role == "system" || role == "developer" || role == "user") {
      if (!m.contains("content") || !(m["content"].is_string() || m["content"].is_array()))
        return invalid("Missing required parameter: '" + at + ".content'.", at + ".content");
      in_tool_block = false;
    } else if (role == "assistant") {
      const bool has_calls =
          m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty();
      const bool has_content = m.contains("content") && !m["content"].is_null();
      if (!has_calls && !has_content)
        return invalid("Invalid value for '" + at + ".content': expected a string, got null.",
                       at + ".content");
      in_tool_block = has_calls;
      pending_from = i;
      if (has_calls) {
        for (std::size_t k = 0; k < m["tool_calls"].size(); ++k) {
          const Json& call = m["tool_calls"][k];
          const std::string cat = at + ".tool_calls.[" + std::to_string(k) + "]";
          if (!call.is_object() || !call.contains("id") || !call["id"].is_string())
            return invalid("Missing required parameter: '" + cat + ".id'.", cat + ".id");
          if (!call.contains("function") || !call["function"].is_object() ||
              !call["function"].contains("name") || !call["function"].contains("arguments") ||
              !call["function"]["arguments"].is_string())
            return invalid("Missing required parameter: '" + cat + ".function'.",
                           cat + ".function");
          pending.insert(call["id"].get<std::string>());
        }
      }
    } else if (role == "tool") {
      if (!in_tool_block)
        return invalid(
            "Invalid parameter: messages with role 'tool' must be a response to a "
            "preceeding message with 'tool_calls'.",
            at + ".role");
      if (!m.contains("tool_call_id") || !m["tool_call_id"].is_string())
        return invalid("Missing required parameter: '" + at + ".tool_call_id'.",
                       at + ".tool_call_id");
      if (!pending.erase(m["tool_call_id"].get<std::string>()))
        return invalid("Invalid parameter: 'tool_call_id' of '" +
                           m["tool_call_id"].get<std::string>() +
                           "' not found in 'tool_calls' of previous message.",
                       at + ".tool_call_id");
    } else {
      return invalid("Invalid value: '" + role +
                         "'. Supported values are: 'system', 'assistant', "
                         "'user', 'tool', and 'developer'.",
                     at + ".role");
    }
  }
  if (!pending.empty()) {
    std::string ids;
    for (const auto& id : pending) ids += (ids.empty() ? "" : ", ") + id;
    return invalid(
        "An assistant message with 'tool_calls' must be followed by tool messages "
        "responding to each 'tool_call_id'. The following tool_call_ids did not have "
        "response messages: " +
            ids,
        "messages.[" + std::to_string(pending_from) + "].role");
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> check_openai_headers(const Headers& headers, const std::string& api_key) {
  auto auth = headers.get("authorization");
  std::string key;
  if (auth && to_lower(auth->substr(0, 7)) == "bearer ") key = std::string(auth->substr(7));
  if (key.empty())
    return ApiError{401, "invalid_request_error",
                    "You didn't provide an API key. You need to provide your API key in an "
                    "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                    "", ""};
  if (!api_key.empty() && key != api_key)
    return ApiError{401, "invalid_request_error",
                    "Incorrect API key provided: " + masked(key) + ".", "invalid_api_key", ""};
  auto type = headers.get("content-type");
  if (!type || to_lower(*type).rfind("application/json", 0) != 0)
    return invalid("Invalid content type: the request body must be sent as application/json.");
  return std::nullopt;
}

std::optional<ApiError> check_openai_body(const Json& body) {
  if (!body.is_object()) return invalid("The request body must be a JSON object.");
  if (!body.contains("model") || !body["model"].is_string())
    return invalid("you must provide a model parameter", "model");
  if (!body.contains("messages") || !body["messages"].is_array())
    return invalid("Missing required parameter: 'messages'.", "messages");
  if (body["messages"].empty())
    return invalid(
        "Invalid 'messages': empty array. Expected an array with minimum length 1, "
        "but got an empty array instead.",
        "messages");
  for (const char* p : {"max_tokens", "max_completion_tokens"})
    if (body.contains(p) && !body[p].is_number_integer())
      return invalid(std::string("Invalid type for '") + p + "': expected an integer.", p);
  const bool stream =
      body.contains("stream") && body["stream"].is_boolean() && body["stream"].get<bool>();
  if (body.contains("stream_options") && !body["stream_options"].is_null() && !stream)
    return invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                   "stream_options");
  if (auto e = check_tools(body)) return e;
  return check_messages(body["messages"]);
}

}  // namespace loopr::mock_llm
