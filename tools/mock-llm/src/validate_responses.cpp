// The OpenAI Responses API's checks (POST /v1/responses): the 400s the service sends for a
// missing model or input, malformed items, a function_call_output without its call, a call
// left unanswered, function tools without a name. Auth and content type are chat's
// (check_openai_headers). Unknown item and tool types are accepted, as the service has many.
#include <mock_llm/validate.hpp>
#include <set>

namespace loopr::mock_llm {
namespace {

using Json = nlohmann::json;

ApiError invalid(std::string message, std::string param = "") {
  return ApiError{400, "invalid_request_error", std::move(message), "", std::move(param)};
}

std::optional<ApiError> check_tools(const Json& body) {
  if (!body.contains("tools")) return std::nullopt;
  const Json& tools = body["tools"];
  if (!tools.is_array()) return invalid("Invalid type for 'tools': expected an array.", "tools");
  std::set<std::string> names;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const Json& t = tools[i];
    const std::string at = "tools[" + std::to_string(i) + "]";
    if (!t.is_object() || !t.contains("type") || !t["type"].is_string())
      return invalid("Missing required parameter: '" + at + ".type'.", at + ".type");
    if (t["type"] != "function") continue;
    if (!t.contains("name") || !t["name"].is_string())
      return invalid("Missing required parameter: '" + at + ".name'.", at + ".name");
    if (!names.insert(t["name"].get<std::string>()).second)
      return invalid("Duplicate tool name: '" + t["name"].get<std::string>() + "'.", at + ".name");
  }
  return std::nullopt;
}

bool is_string(const Json& item, const char* key) {
  return item.contains(key) && item[key].is_string();
}

/// A message item: a known role and string or array content.
std::optional<ApiError> check_message(const Json& item, const std::string& at) {
  static const std::set<std::string> roles = {"user", "assistant", "system", "developer"};
  if (!is_string(item, "role") || !roles.count(item["role"].get<std::string>()))
    return invalid("Invalid value for '" + at +
                       ".role': expected one of 'user', 'assistant', 'system' or 'developer'.",
                   at + ".role");
  if (!item.contains("content") || !(item["content"].is_string() || item["content"].is_array()))
    return invalid("Missing required parameter: '" + at + ".content'.", at + ".content");
  return std::nullopt;
}

/// Items that call a tool, and the type of the item that answers them.
std::string output_type_of(const std::string& type) {
  if (type == "function_call") return "function_call_output";
  if (type == "custom_tool_call") return "custom_tool_call_output";
  return {};
}

std::optional<ApiError> check_items(const Json& input) {
  std::set<std::string> open;  // call_ids of calls not answered yet
  for (std::size_t i = 0; i < input.size(); ++i) {
    const Json& item = input[i];
    const std::string at = "input[" + std::to_string(i) + "]";
    if (!item.is_object()) return invalid("Invalid type for '" + at + "': expected an object.", at);
    const std::string type = item.value("type", "message");
    if (type == "message") {
      if (auto e = check_message(item, at)) return e;
    } else if (!output_type_of(type).empty()) {
      if (!is_string(item, "call_id"))
        return invalid("Missing required parameter: '" + at + ".call_id'.", at + ".call_id");
      if (!is_string(item, "name"))
        return invalid("Missing required parameter: '" + at + ".name'.", at + ".name");
      const char* payload = type == "function_call" ? "arguments" : "input";
      if (!is_string(item, payload))
        return invalid("Missing required parameter: '" + at + "." + payload + "'.",
                       at + "." + payload);
      open.insert(item["call_id"].get<std::string>());
    } else if (type == "function_call_output" || type == "custom_tool_call_output") {
      if (!is_string(item, "call_id"))
        return invalid("Missing required parameter: '" + at + ".call_id'.", at + ".call_id");
      const std::string id = item["call_id"].get<std::string>();
      if (!open.erase(id))
        return invalid("No tool call found for function call output with call_id " + id + ".",
                       "input");
      if (!item.contains("output"))
        return invalid("Missing required parameter: '" + at + ".output'.", at + ".output");
    } else if (type == "reasoning") {
      // A stateless request (store: false) can only send reasoning back with its content.
      if (!item.contains("encrypted_content"))
        return invalid("Item with id '" + item.value("id", "") +
                           "' not found. Items are not persisted when `store` is set to false. "
                           "Try again with `store` set to true, or remove this item from your "
                           "input.",
                       "input");
    }
  }
  if (!open.empty())
    return invalid("No tool output found for function call " + *open.begin() + ".", "input");
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> check_responses_body(const Json& body) {
  if (!body.is_object()) return invalid("The request body must be a JSON object.");
  if (!body.contains("model") || !body["model"].is_string())
    return invalid("Missing required parameter: 'model'.", "model");
  if (!body.contains("input") || !(body["input"].is_string() || body["input"].is_array()))
    return invalid("Missing required parameter: 'input'.", "input");
  if (body.contains("instructions") && !body["instructions"].is_null() &&
      !body["instructions"].is_string())
    return invalid("Invalid type for 'instructions': expected a string.", "instructions");
  if (body.contains("max_output_tokens") && !body["max_output_tokens"].is_null()) {
    if (!body["max_output_tokens"].is_number_integer())
      return invalid("Invalid type for 'max_output_tokens': expected an integer.",
                     "max_output_tokens");
    if (body["max_output_tokens"].get<std::int64_t>() < 16)
      return invalid(
          "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16.",
          "max_output_tokens");
  }
  if (body.contains("messages"))
    return invalid("Unsupported parameter: 'messages'. In the Responses API, use 'input'.",
                   "messages");
  if (auto e = check_tools(body)) return e;
  if (body["input"].is_array()) return check_items(body["input"]);
  return std::nullopt;
}

}  // namespace loopr::mock_llm
