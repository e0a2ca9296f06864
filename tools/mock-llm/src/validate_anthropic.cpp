#include <mock_llm/validate.hpp>
#include <set>
#include <vector>

namespace loopr::mock_llm {
namespace {

using Json = nlohmann::json;

ApiError invalid(std::string message) { return ApiError{400, "", std::move(message), "", ""}; }

std::optional<std::string> bearer_token(const Headers& headers) {
  auto auth = headers.get("authorization");
  if (!auth) return std::nullopt;
  std::string value(*auth);
  if (to_lower(value.substr(0, 7)) != "bearer ") return std::string();
  return value.substr(7);
}

bool content_type_is_json(const Headers& headers) {
  auto type = headers.get("content-type");
  return type && to_lower(*type).rfind("application/json", 0) == 0;
}

/// One turn after merging consecutive same-role messages (the service merges them).
struct Turn {
  std::string role;
  std::size_t first_message = 0;
  std::vector<std::pair<std::size_t, const Json*>> blocks;  ///< (message index, block)
};

std::optional<ApiError> check_content(const Json& m, std::size_t i, std::string_view version) {
  const std::string where = "messages." + std::to_string(i);
  if (!m.contains("content")) return invalid(where + ".content: Field required");
  const Json& content = m["content"];
  const std::string role = m["role"].get<std::string>();
  if (content.is_string()) {
    if (content.get_ref<const std::string&>().empty() && role != "assistant")
      return invalid(where +
                     ": all messages must have non-empty content except for the optional "
                     "final assistant message");
    return std::nullopt;
  }
  if (!content.is_array()) return invalid(where + ".content: Input should be a valid list");
  if (content.empty() && role != "assistant")
    return invalid(where +
                   ": all messages must have non-empty content except for the optional "
                   "final assistant message");
  bool after_other = false;
  for (std::size_t k = 0; k < content.size(); ++k) {
    const Json& b = content[k];
    const std::string at = where + ".content." + std::to_string(k);
    if (!b.is_object() || !b.contains("type") || !b["type"].is_string())
      return invalid(at + ".type: Field required");
    const std::string type = b["type"].get<std::string>();
    if (type == "text" && (!b.contains("text") || !b["text"].is_string()))
      return invalid(at + ".text: Field required");
    if (type == "tool_use") {
      if (role != "assistant")
        return invalid(at + ": `tool_use` blocks can only be in assistant messages");
      if (!b.contains("id") || !b["id"].is_string() || !b.contains("name") || !b.contains("input"))
        return invalid(at + ": a `tool_use` block needs `id`, `name` and `input`");
    }
    if (type == "tool_result") {
      if (role != "user")
        return invalid(at + ": `tool_result` blocks can only be in user messages");
      if (!b.contains("tool_use_id") || !b["tool_use_id"].is_string())
        return invalid(at + ".tool_use_id: Field required");
      if (after_other)
        return invalid(at +
                       ": `tool_result` blocks must come first in the user message content, "
                       "before any other block");
    } else {
      after_other = true;
    }
    if (version == "2026-10-21") {
      if (role == "user" && type == "text" && b.contains("citations") &&
          b["citations"].is_array() && !b["citations"].empty())
        return invalid(at +
                       ".citations: user `text` blocks cannot carry citations in API version "
                       "2026-10-21");
      if (role == "assistant" && type == "document")
        return invalid(at +
                       ": `document` blocks cannot appear directly in an assistant message in "
                       "API version 2026-10-21");
    }
  }
  return std::nullopt;
}

std::optional<ApiError> check_tools(const Json& body) {
  if (!body.contains("tools")) return std::nullopt;
  const Json& tools = body["tools"];
  if (!tools.is_array()) return invalid("tools: Input should be a valid list");
  std::set<std::string> names;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const Json& t = tools[i];
    const std::string at = "tools." + std::to_string(i);
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
      return invalid(at + ".name: Field required");
    // Server tools (`type: web_search_…`) carry no schema; custom tools need one.
    const bool custom = !t.contains("type") || t["type"] == "custom";
    if (custom && (!t.contains("input_schema") || !t["input_schema"].is_object()))
      return invalid(at + ".input_schema: Field required");
    if (!names.insert(t["name"].get<std::string>()).second)
      return invalid("tools: Tool names must be unique.");
  }
  return std::nullopt;
}

std::optional<ApiError> check_tool_choice(const Json& body) {
  if (!body.contains("tool_choice")) return std::nullopt;
  const Json& choice = body["tool_choice"];
  const std::string type = choice.is_object() ? choice.value("type", "") : "";
  if (type == "any" || type == "tool")
    return invalid("tool_choice: forced tool use (`" + type +
                   "`) is not supported with this model. Use `tool_choice: {\"type\": \"auto\"}` "
                   "and say in the prompt which tool to use.");
  if (type != "auto" && type != "none")
    return invalid("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'");
  return std::nullopt;
}

/// Every tool_use answered by a tool_result in the next turn, and no tool_result without one.
std::optional<ApiError> check_tool_pairing(const std::vector<Turn>& turns) {
  for (std::size_t t = 0; t < turns.size(); ++t) {
    const Turn& turn = turns[t];
    if (turn.role == "assistant") {
      std::vector<std::string> ids;
      std::set<std::string> unique;
      for (const auto& [mi, b] : turn.blocks)
        if (b->value("type", "") == "tool_use") {
          std::string id = (*b)["id"].get<std::string>();
          if (!unique.insert(id).second)
            return invalid("messages." + std::to_string(mi) + ": `tool_use` ids must be unique (" +
                           id + " is used twice)");
          ids.push_back(id);
        }
      if (ids.empty() || t + 1 == turns.size()) continue;  // a final assistant turn: pause_turn
      std::set<std::string> answered;
      for (const auto& [mi, b] : turns[t + 1].blocks)
        if (b->value("type", "") == "tool_result")
          answered.insert((*b)["tool_use_id"].get<std::string>());
      std::string missing;
      for (const auto& id : ids)
        if (!answered.count(id)) missing += (missing.empty() ? "" : ", ") + id;
      if (!missing.empty())
        return invalid("messages." + std::to_string(turns[t + 1].first_message) +
                       ": `tool_use` ids were found without `tool_result` blocks immediately "
                       "after: " +
                       missing +
                       ". Each `tool_use` block must have a corresponding `tool_result` block in "
                       "the next message.");
    } else {
      std::set<std::string> offered;
      if (t > 0 && turns[t - 1].role == "assistant")
        for (const auto& [mi, b] : turns[t - 1].blocks)
          if (b->value("type", "") == "tool_use") offered.insert((*b)["id"].get<std::string>());
      for (const auto& [mi, b] : turn.blocks) {
        if (b->value("type", "") != "tool_result") continue;
        std::string id = (*b)["tool_use_id"].get<std::string>();
        if (!offered.count(id))
          return invalid("messages." + std::to_string(mi) +
                         ": unexpected `tool_use_id` found in `tool_result` blocks: " + id +
                         ". Each `tool_result` block must have a corresponding `tool_use` block in "
                         "the previous message.");
      }
    }
  }
  return std::nullopt;
}

}  // namespace

bool is_known_anthropic_version(std::string_view version) {
  return version == "2026-10-21" || version == "2023-06-01" || version == "2023-01-01";
}

std::optional<ApiError> check_api_key(const Headers& headers, const std::string& api_key) {
  std::optional<std::string> key;
  if (auto k = headers.get("x-api-key"))
    key = std::string(*k);
  else
    key = bearer_token(headers);
  if (!key || key->empty())
    return ApiError{401, "", key ? "invalid x-api-key" : "x-api-key header is required", "", ""};
  if (!api_key.empty() && *key != api_key) return ApiError{401, "", "invalid x-api-key", "", ""};
  return std::nullopt;
}

std::optional<ApiError> check_anthropic_headers(const Headers& headers,
                                                const std::string& api_key) {
  std::optional<std::string> key;
  if (auto k = headers.get("x-api-key"))
    key = std::string(*k);
  else
    key = bearer_token(headers);
  if (!key || key->empty())
    return ApiError{401, "", key ? "invalid x-api-key" : "x-api-key header is required", "", ""};
  if (!api_key.empty() && *key != api_key) return ApiError{401, "", "invalid x-api-key", "", ""};
  auto version = headers.get("anthropic-version");
  if (!version) return invalid("anthropic-version: header is required");
  if (!is_known_anthropic_version(*version))
    return invalid("anthropic-version: unknown version `" + std::string(*version) +
                   "` (known: 2026-10-21, 2023-06-01, 2023-01-01)");
  if (!content_type_is_json(headers))
    return invalid("content-type: the request body must be sent as application/json");
  return std::nullopt;
}

std::optional<ApiError> check_anthropic_body(const Json& body, std::string_view version,
                                             const ConversationRegistry& conversations) {
  if (!body.is_object()) return invalid("The request body must be a JSON object.");
  if (!body.contains("model")) return invalid("model: Field required");
  if (!body["model"].is_string()) return invalid("model: Input should be a valid string");
  if (!body.contains("max_tokens")) return invalid("max_tokens: Field required");
  if (!body["max_tokens"].is_number_integer() || body["max_tokens"].get<std::int64_t>() < 0)
    return invalid("max_tokens: Input should be a valid integer greater than or equal to 0");
  if (!body.contains("messages")) return invalid("messages: Field required");
  if (!body["messages"].is_array()) return invalid("messages: Input should be a valid list");
  if (body["messages"].empty()) return invalid("messages: at least one message is required");
  if (body.contains("stream") && !body["stream"].is_boolean())
    return invalid("stream: Input should be a valid boolean");
  if (version == "2026-10-21")
    for (const char* p : {"temperature", "top_p", "top_k"})
      if (body.contains(p))
        return invalid(std::string(p) +
                       ": this parameter is not supported in API version 2026-10-21 (sampling "
                       "uses its defaults); remove it from the request");
  if (auto e = check_tool_choice(body)) return e;
  if (auto e = check_tools(body)) return e;

  const Json& messages = body["messages"];
  std::vector<Turn> turns;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      return invalid("messages." + std::to_string(i) + ".role: Field required");
    const std::string role = m["role"].get<std::string>();
    if (role != "user" && role != "assistant" && role != "system")
      return invalid("messages." + std::to_string(i) +
                     ".role: Input should be 'user', "
                     "'assistant' or 'system'");
    if (i == 0 && role != "user")
      return invalid("messages: first message must use the \"user\" role");
    if (auto e = check_content(m, i, version)) return e;
    if (role == "system") continue;  // system-role messages between turns are accepted as is
    if (turns.empty() || turns.back().role != role) turns.push_back({role, i, {}});
    if (m["content"].is_array())
      for (const auto& b : m["content"]) turns.back().blocks.emplace_back(i, &b);
  }
  if (turns.back().role == "assistant") {
    // Resending a pause_turn answer to let it continue is the one allowed trailing assistant turn.
    const Json& last = messages[turns.back().blocks.empty() ? turns.back().first_message
                                                            : turns.back().blocks.back().first];
    if (!conversations.is_paused_turn(last["content"]))
      return invalid(
          "This model does not support assistant message prefill. The conversation "
          "must end with a user message.");
  }
  if (auto e = check_tool_pairing(turns)) return e;
  if (auto message = conversations.check(body)) return invalid(*message);
  return std::nullopt;
}

}  // namespace loopr::mock_llm
