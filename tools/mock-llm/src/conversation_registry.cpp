#include <algorithm>
#include <functional>
#include <map>
#include <mock_llm/conversation_registry.hpp>
#include <string_view>

namespace loopr::mock_llm {
namespace {

using Json = nlohmann::json;

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  return h ^ (v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2));
}

/// Hashes the value itself, walking it, rather than its dump: serialising every message of
/// every request was the largest CPU cost per request. Objects hash in key order (sorted).
/// What is not content is left out, as the service leaves it out: `cache_control` (clients move
/// their cache breakpoint to the newest message on every turn) and null fields (`"citations":
/// null` and an absent field mean the same).
std::uint64_t hash_json(const Json& j) {
  std::uint64_t h = static_cast<std::uint64_t>(j.type()) * 0x100000001B3ULL;
  switch (j.type()) {
    case Json::value_t::string:
      return mix(h, std::hash<std::string_view>{}(j.get_ref<const std::string&>()));
    case Json::value_t::object:
      for (const auto& [k, v] : j.items()) {
        if (k == "cache_control" || v.is_null()) continue;
        h = mix(mix(h, std::hash<std::string_view>{}(k)), hash_json(v));
      }
      return h;
    case Json::value_t::array:
      for (const auto& v : j) h = mix(h, hash_json(v));
      return h;
    case Json::value_t::boolean:
      return mix(h, j.get<bool>() ? 1 : 2);
    case Json::value_t::number_integer:
      return mix(h, static_cast<std::uint64_t>(j.get<std::int64_t>()));
    case Json::value_t::number_unsigned:
      return mix(h, j.get<std::uint64_t>());
    case Json::value_t::number_float:
      return mix(h, std::hash<double>{}(j.get<double>()));
    default:
      return h;
  }
}

/// Message content or system text: a string is the same as one text block holding it (the
/// claude CLI sends a message as blocks with a cache breakpoint, then as a plain string).
std::uint64_t hash_content(const Json& content) {
  if (content.is_string()) return hash_json(Json::array({{{"type", "text"}, {"text", content}}}));
  return hash_json(content);
}

std::uint64_t hash_message(const Json& message) {
  if (!message.is_object()) return hash_json(message);
  std::uint64_t h = hash_json(message.contains("role") ? message["role"] : Json());
  return mix(h, hash_content(message.contains("content") ? message["content"] : Json()));
}

bool is_thinking(const Json& block) {
  if (!block.is_object()) return false;
  const std::string type = block.value("type", "");
  return type == "thinking" || type == "redacted_thinking";
}

/// The key a thinking block is known by: its signature, or a redacted block's data.
std::string thinking_key(const Json& block) {
  const char* field = block.value("type", "") == "thinking" ? "signature" : "data";
  return block.contains(field) && block[field].is_string() ? block[field].get<std::string>() : "";
}

/// The fields that must come back byte-identical (extra fields such as cache_control may be
/// added by the client; the service ignores them too).
Json essential(const Json& block) {
  if (block.value("type", "") == "thinking")
    return {{"type", "thinking"},
            {"thinking", block.contains("thinking") ? block["thinking"] : Json()},
            {"signature", block.contains("signature") ? block["signature"] : Json()}};
  return {{"type", "redacted_thinking"}, {"data", block.contains("data") ? block["data"] : Json()}};
}

}  // namespace

std::uint64_t conversation_hash(const Json& body, std::size_t count) {
  std::uint64_t h = hash_content(body.contains("system") ? body["system"] : Json());
  h = mix(h, hash_json(body.contains("tools") ? body["tools"] : Json()));
  const Json& messages = body["messages"];
  for (std::size_t i = 0; i < count && i < messages.size(); ++i)
    h = mix(h, hash_message(messages[i]));
  return h;
}

void ConversationRegistry::record(const Json& body, const Json& content,
                                  const std::string& stop_reason) {
  if (stop_reason == "pause_turn") paused_.insert(hash_content(content));
  // Without thinking blocks there is nothing a later request could alter or drop.
  if (std::none_of(content.begin(), content.end(), is_thinking)) return;
  Response r;
  r.conversation = conversation_hash(body, body["messages"].size());
  const std::size_t index = responses_.size();
  for (const auto& block : content) {
    if (is_thinking(block)) {
      thinking_[thinking_key(block)] = Thinking{index, r.thinking_count++, essential(block)};
    } else if (block.value("type", "") == "tool_use") {
      tool_ids_[block.value("id", "")] = index;
    }
  }
  responses_.push_back(r);
}

bool ConversationRegistry::is_paused_turn(const Json& content) const {
  return paused_.count(hash_content(content)) > 0;
}

std::optional<std::string> ConversationRegistry::check(const Json& body) const {
  const Json& messages = body["messages"];
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    if (m.value("role", "") != "assistant" || !m.contains("content") || !m["content"].is_array())
      continue;
    const Json& content = m["content"];
    const std::string where = "messages." + std::to_string(i) + ".content.";
    // response index → positions of its thinking blocks seen in this message, in order
    std::map<std::size_t, std::vector<std::size_t>> seen;
    std::optional<std::size_t> first_response;
    for (std::size_t k = 0; k < content.size(); ++k) {
      const Json& block = content[k];
      if (block.is_object() && block.value("type", "") == "tool_use") {
        auto t = tool_ids_.find(block.value("id", ""));
        if (t != tool_ids_.end()) seen[t->second];  // the response is referenced
        continue;
      }
      if (!is_thinking(block)) continue;
      const std::string type = block.value("type", "");
      auto it = thinking_.find(thinking_key(block));
      if (it == thinking_.end())
        return where + std::to_string(k) + ": Invalid `" +
               std::string(type == "thinking" ? "signature" : "data") + "` in `" + type + "` block";
      if (essential(block) != it->second.block)
        return where + std::to_string(k) +
               ": `thinking` or `redacted_thinking` blocks in the latest assistant message cannot "
               "be modified. These blocks must remain as they were in the original response.";
      seen[it->second.response].push_back(it->second.position);
      if (!first_response) {
        first_response = it->second.response;
        if (responses_[*first_response].conversation != conversation_hash(body, i))
          return where + std::to_string(k) + ": this `" + type +
                 "` block is bound to a different conversation (the system prompt, the tools or "
                 "an earlier message changed since it was generated; requests must only append)";
      }
    }
    for (const auto& [response, positions] : seen) {
      const std::size_t expected = responses_[response].thinking_count;
      bool in_order = positions.size() == expected;
      for (std::size_t p = 0; in_order && p < positions.size(); ++p) in_order = positions[p] == p;
      if (!in_order)
        return "messages." + std::to_string(i) +
               ": `thinking` or `redacted_thinking` blocks in the latest assistant message cannot "
               "be modified. These blocks must remain as they were in the original response (" +
               std::to_string(expected) + " expected in order, " +
               std::to_string(positions.size()) + " found).";
    }
  }
  return std::nullopt;
}

}  // namespace loopr::mock_llm
