#include "engine/transcript.hpp"

#include <cstdio>

#include <loopr/core/text.hpp>

namespace loopr::engine {

nlohmann::json message_json(const llm::Message& m) {
  nlohmann::json content = nlohmann::json::array();
  for (const auto& b : m.content) {
    if (!b.raw.is_null()) {
      content.push_back(b.raw);
      continue;
    }
    switch (b.type) {
      case llm::ContentBlock::Type::text:
        content.push_back({{"type", "text"}, {"text", b.text}});
        break;
      case llm::ContentBlock::Type::tool_use:
        content.push_back(
            {{"type", "tool_use"}, {"id", b.id}, {"name", b.name}, {"input", b.input}});
        break;
      case llm::ContentBlock::Type::tool_result:
        content.push_back({{"type", "tool_result"},
                           {"tool_use_id", b.id},
                           {"content", b.text},
                           {"is_error", b.is_error}});
        break;
      default:
        content.push_back({{"type", "other"}, {"text", b.text}});
        break;
    }
  }
  return {{"role", m.role == llm::Role::user ? "user" : "assistant"}, {"content", content}};
}

std::string conversation_jsonl(const std::vector<llm::Message>& messages,
                               const std::vector<nlohmann::json>& calls) {
  std::string out;
  for (const auto& m : messages)
    out += message_json(m).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  for (const auto& c : calls) out += json_text(nlohmann::json{{"receipt", c}}) + "\n";
  return out;
}

}  // namespace loopr::engine
