#include "llm/prompt_cache.hpp"

#include <cstdint>
#include <vector>

#include <loopr/core/stable_hash.hpp>

namespace loopr::llm {

using nlohmann::json;

namespace {

// Whether a block may carry cache_control: the API refuses it on empty text blocks and on
// thinking blocks (their place in the cache is the message they are in).
bool cacheable(const json& b) {
  if (!b.is_object()) return false;
  const std::string type = b.value("type", "");
  if (type == "thinking" || type == "redacted_thinking") return false;
  if (type == "text")
    return b.contains("text") && b["text"].is_string() &&
           !b["text"].get_ref<const std::string&>().empty();
  if (type == "tool_result") {
    const json& c = b.contains("content") ? b["content"] : json();
    return (c.is_string() && !c.get_ref<const std::string&>().empty()) ||
           (c.is_array() && !c.empty());
  }
  return !type.empty();
}

// The last block of `blocks` that may carry a marker; nullptr if none.
json* last_cacheable(json& blocks) {
  if (!blocks.is_array()) return nullptr;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it)
    if (cacheable(*it)) return &*it;
  return nullptr;
}

// The newest block that may carry a marker in messages [1, end): the opening message has its own.
json* newest_before(json& messages, std::size_t end) {
  for (std::size_t i = end; i-- > 1;)
    if (json* b = last_cacheable(messages[i]["content"])) return b;
  return nullptr;
}

int count_in(const json& blocks) {
  int n = 0;
  if (!blocks.is_array()) return 0;
  for (const auto& b : blocks)
    if (b.is_object() && b.contains("cache_control")) ++n;
  return n;
}

}  // namespace

void mark_cache_breakpoints(json& body, bool ttl_1h) {
  json marker = {{"type", "ephemeral"}};
  if (ttl_1h) marker["ttl"] = "1h";
  std::vector<json*> points;
  json* head = body.contains("system") ? last_cacheable(body["system"]) : nullptr;
  if (!head && body.contains("tools") && body["tools"].is_array() && !body["tools"].empty())
    head = &body["tools"].back();
  if (head) points.push_back(head);

  json& messages = body["messages"];
  if (messages.is_array() && !messages.empty()) {
    const std::size_t n = messages.size();
    if (json* b = last_cacheable(messages[0]["content"])) points.push_back(b);
    // The previous turn's newest block (what the turn before marked last), then this turn's.
    json* previous = n >= 3 ? newest_before(messages, n - 2) : nullptr;
    json* newest = newest_before(messages, n);
    if (previous) points.push_back(previous);
    if (newest && newest != previous) points.push_back(newest);
  }
  for (std::size_t i = 0; i < points.size() && i < static_cast<std::size_t>(kMaxCacheBreakpoints);
       ++i)
    (*points[i])["cache_control"] = marker;
}

int count_cache_breakpoints(const json& body) {
  int n = body.contains("tools") ? count_in(body["tools"]) : 0;
  if (body.contains("system")) n += count_in(body["system"]);
  if (body.contains("messages") && body["messages"].is_array())
    for (const auto& m : body["messages"])
      if (m.is_object() && m.contains("content")) n += count_in(m["content"]);
  return n;
}

std::string prompt_cache_key(const std::string& working_dir, const std::string& loop_id) {
  // FNV-1a 64 over both (a separator between them): stable across runs and builds.
  constexpr std::string_view kSeparator("\xFF", 1);
  std::uint64_t h = stable_hash(kSeparator, stable_hash(working_dir));
  h = stable_hash(kSeparator, stable_hash(loop_id, h));
  return "loopr-" + stable_hash_hex(h);
}

}  // namespace loopr::llm
