#include <algorithm>
#include <functional>
#include <mock_llm/prompt_cache.hpp>
#include <vector>

namespace loopr::mock_llm {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kLookback = 20;  // blocks before a breakpoint the service also checks
constexpr int kMaxBreakpoints = 4;

ApiError invalid(std::string message) { return ApiError{400, "", std::move(message), "", ""}; }

// The block as it counts for the cache: its content without the marker.
Json content_of(const Json& block) {
  if (!block.is_object() || !block.contains("cache_control")) return block;
  Json copy = block;
  copy.erase("cache_control");
  return copy;
}

struct Segment {
  std::int64_t tokens = 0;
  std::uint64_t hash = 0;  ///< of the whole prefix up to and including this block
  std::optional<std::chrono::seconds> breakpoint;  ///< its TTL when the block is a breakpoint
};

std::chrono::seconds ttl_of(const Json& marker) {
  return marker.is_object() && marker.value("ttl", "") == "1h" ? std::chrono::seconds(3600)
                                                               : std::chrono::seconds(300);
}

// Every block in the service's order, each with the hash of the prefix it ends.
std::vector<Segment> segments(const Json& body, const std::string& scope) {
  std::vector<Segment> out;
  std::uint64_t h = std::hash<std::string>{}(scope + "\n" + body.value("model", ""));
  auto add = [&](const Json& block, const std::string& where) {
    Segment s;
    s.tokens = PromptCache::tokens(block);
    h ^= std::hash<std::string>{}(where + content_of(block).dump()) + 0x9E3779B97F4A7C15ULL +
         (h << 6) + (h >> 2);
    s.hash = h;
    if (block.is_object() && block.contains("cache_control"))
      s.breakpoint = ttl_of(block["cache_control"]);
    out.push_back(s);
  };
  if (body.contains("tools") && body["tools"].is_array())
    for (const auto& t : body["tools"]) add(t, "tool");
  if (body.contains("system")) {
    const Json& sys = body["system"];
    if (sys.is_string())
      add(Json{{"type", "text"}, {"text", sys}}, "system");
    else if (sys.is_array())
      for (const auto& b : sys) add(b, "system");
  }
  for (const auto& m : body["messages"]) {
    const std::string role = m.value("role", "");
    const Json& c = m.contains("content") ? m["content"] : Json();
    if (c.is_string())
      add(Json{{"type", "text"}, {"text", c}}, role);
    else if (c.is_array())
      for (const auto& b : c) add(b, role);
  }
  return out;
}

bool empty_text(const Json& b) {
  return b.value("type", "") == "text" && (!b.contains("text") || !b["text"].is_string() ||
                                           b["text"].get_ref<const std::string&>().empty());
}

}  // namespace

std::int64_t PromptCache::tokens(const Json& block) {
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(content_of(block).dump().size() / 4));
}

std::optional<ApiError> check_cache_breakpoints(const Json& body) {
  int found = 0;
  std::optional<ApiError> bad;
  auto look = [&](const Json& blocks, const std::string& where) {
    if (!blocks.is_array()) return;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const Json& b = blocks[i];
      if (!b.is_object() || !b.contains("cache_control")) continue;
      ++found;
      const std::string type = b.value("type", "");
      if (!bad && empty_text(b))
        bad = invalid(where + "." + std::to_string(i) +
                      ".cache_control: cache_control cannot be set for empty text blocks");
      if (!bad && (type == "thinking" || type == "redacted_thinking"))
        bad = invalid(where + "." + std::to_string(i) +
                      ".cache_control: thinking blocks cannot be marked with cache_control");
    }
  };
  if (body.contains("tools")) look(body["tools"], "tools");
  if (body.contains("system")) look(body["system"], "system");
  if (body.contains("messages") && body["messages"].is_array())
    for (std::size_t i = 0; i < body["messages"].size(); ++i) {
      const Json& m = body["messages"][i];
      if (m.is_object() && m.contains("content"))
        look(m["content"], "messages." + std::to_string(i) + ".content");
    }
  if (found > kMaxBreakpoints)
    return invalid("A maximum of 4 blocks with cache_control may be provided. Found " +
                   std::to_string(found) + ".");
  return bad;
}

CacheUsage PromptCache::account(const Json& body, const std::string& scope, Clock::time_point now) {
  std::vector<Segment> segs = segments(body, scope);
  std::vector<std::int64_t> upto(segs.size());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < segs.size(); ++i) upto[i] = total += segs[i].tokens;

  // Read: the longest live prefix ending at a breakpoint or within the lookback before one.
  std::optional<std::size_t> hit;
  for (std::size_t b = 0; b < segs.size(); ++b) {
    if (!segs[b].breakpoint) continue;
    for (std::size_t k = 0; k <= kLookback && k <= b; ++k) {
      std::size_t p = b - k;
      auto it = entries_.find(segs[p].hash);
      if (it == entries_.end() || it->second.expires <= now) continue;
      if (!hit || p > *hit) hit = p;
      break;  // the nearest one before this breakpoint is the longest it can read
    }
  }
  CacheUsage u;
  if (hit) {
    u.cache_read_input_tokens = upto[*hit];
    Entry& e = entries_[segs[*hit].hash];
    e.expires = now + e.ttl;  // a hit refreshes the entry
  }
  // Write: every breakpoint past what was read, long enough to be cached.
  std::int64_t written_to = u.cache_read_input_tokens;
  for (std::size_t b = 0; b < segs.size(); ++b) {
    if (!segs[b].breakpoint || upto[b] < min_tokens_ || (hit && b <= *hit)) continue;
    entries_[segs[b].hash] = Entry{now + *segs[b].breakpoint, *segs[b].breakpoint};
    written_to = std::max(written_to, upto[b]);
  }
  u.cache_creation_input_tokens = written_to - u.cache_read_input_tokens;
  u.input_tokens = total - written_to;
  return u;
}

}  // namespace loopr::mock_llm
