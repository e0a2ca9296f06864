#include <mock_llm/render.hpp>
#include <mock_llm/text_util.hpp>

namespace loopr::mock_llm {
namespace {

Json usage_json(const Usage& u, bool with_details) {
  Json j = {{"input_tokens", u.input_tokens},
            {"output_tokens", u.output_tokens},
            {"cache_creation_input_tokens", u.cache_creation_input_tokens},
            {"cache_read_input_tokens", u.cache_read_input_tokens}};
  if (with_details) {
    j["cache_creation"] = {{"ephemeral_5m_input_tokens", u.cache_creation_input_tokens},
                           {"ephemeral_1h_input_tokens", 0}};
    j["service_tier"] = "standard";
  }
  return j;
}

Json stop_sequence_json(const Reply& r) {
  return r.stop_sequence.empty() ? Json(nullptr) : Json(r.stop_sequence);
}

/// A `content_block_delta` event, written directly: deltas are most of a stream's events, and
/// building each as a JSON object was a large share of the CPU per streamed answer.
std::string delta_frame(std::size_t index, std::string_view type, std::string_view field,
                        std::string_view value) {
  std::string out =
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":";
  out += std::to_string(index);
  out += ",\"delta\":{\"type\":\"";
  out += type;
  out += "\",\"";
  out += field;
  out += "\":";
  out += to_wire(Json(value));
  out += "}}\n\n";
  return out;
}

}  // namespace

std::string to_wire(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string sse_event(std::string_view name, const Json& data) {
  std::string out = "event: ";
  out += name;
  out += "\ndata: ";
  out += to_wire(data);
  out += "\n\n";
  return out;
}

Json anthropic_block_json(const Block& b) {
  switch (b.kind) {
    case BlockKind::thinking:
      return {{"type", "thinking"}, {"thinking", b.text}, {"signature", b.signature}};
    case BlockKind::redacted_thinking:
      return {{"type", "redacted_thinking"}, {"data", b.text}};
    case BlockKind::text:
      return {{"type", "text"}, {"text", b.text}, {"citations", nullptr}};
    case BlockKind::tool_use:
      return {{"type", "tool_use"},
              {"id", b.id},
              {"name", b.name},
              {"input", b.input},
              {"caller", {{"type", "direct"}}}};
    case BlockKind::raw:
      return b.input;
  }
  return nullptr;
}

Json anthropic_content_json(const Reply& reply) {
  Json content = Json::array();
  for (const Block& b : reply.blocks) content.push_back(anthropic_block_json(b));
  return content;
}

Json anthropic_message_json(const Reply& reply) {
  return {{"id", reply.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", reply.model},
          {"content", anthropic_content_json(reply)},
          {"stop_reason", reply.stop_reason},
          {"stop_sequence", stop_sequence_json(reply)},
          {"stop_details", reply.stop_details},
          {"usage", usage_json(reply.usage, true)}};
}

std::vector<std::string> anthropic_sse(const Reply& reply, std::uint64_t seed) {
  std::vector<std::string> events;
  Usage start_usage = reply.usage;
  start_usage.output_tokens = std::min<std::int64_t>(1, reply.usage.output_tokens);
  Json message = {{"id", reply.id},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", reply.model},
                  {"content", Json::array()},
                  {"stop_reason", nullptr},
                  {"stop_sequence", nullptr},
                  {"stop_details", nullptr},
                  {"usage", usage_json(start_usage, true)}};
  events.push_back(sse_event("message_start", {{"type", "message_start"}, {"message", message}}));
  events.push_back(sse_event("ping", {{"type", "ping"}}));
  // An occasional ping between blocks, as the service sends on long answers.
  auto maybe_ping = [&] {
    if (events.size() % 24 == 0) events.push_back(sse_event("ping", {{"type", "ping"}}));
  };
  for (std::size_t i = 0; i < reply.blocks.size(); ++i) {
    const Block& b = reply.blocks[i];
    const std::uint64_t piece_seed = seed + i * 7919;
    Json start;
    switch (b.kind) {
      case BlockKind::thinking:
        start = {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}};
        break;
      case BlockKind::text:
        start = {{"type", "text"}, {"text", ""}};
        break;
      case BlockKind::tool_use:
        start = {{"type", "tool_use"},
                 {"id", b.id},
                 {"name", b.name},
                 {"input", Json::object()},
                 {"caller", {{"type", "direct"}}}};
        break;
      case BlockKind::redacted_thinking:
      case BlockKind::raw:
        start = anthropic_block_json(b);
        break;
    }
    events.push_back(
        sse_event("content_block_start",
                  {{"type", "content_block_start"}, {"index", i}, {"content_block", start}}));
    switch (b.kind) {
      case BlockKind::thinking:
        for (const auto& piece : split_utf8(b.text, 8, 40, piece_seed)) {
          events.push_back(delta_frame(i, "thinking_delta", "thinking", piece));
          maybe_ping();
        }
        events.push_back(delta_frame(i, "signature_delta", "signature", b.signature));
        break;
      case BlockKind::text:
        for (const auto& piece : split_utf8(b.text, 8, 40, piece_seed)) {
          events.push_back(delta_frame(i, "text_delta", "text", piece));
          maybe_ping();
        }
        break;
      case BlockKind::tool_use: {
        // The service starts with an empty fragment, then cuts the JSON anywhere.
        events.push_back(delta_frame(i, "input_json_delta", "partial_json", ""));
        const std::string json = to_wire(b.input);
        const std::size_t piece = std::max<std::size_t>(1, json.size() / 4);
        for (const auto& part :
             split_utf8(json, std::max<std::size_t>(1, piece / 2), piece + 1, piece_seed)) {
          events.push_back(delta_frame(i, "input_json_delta", "partial_json", part));
          maybe_ping();
        }
        break;
      }
      case BlockKind::redacted_thinking:
      case BlockKind::raw:
        break;
    }
    events.push_back(
        sse_event("content_block_stop", {{"type", "content_block_stop"}, {"index", i}}));
  }
  events.push_back(sse_event("message_delta", {{"type", "message_delta"},
                                               {"delta",
                                                {{"stop_reason", reply.stop_reason},
                                                 {"stop_sequence", stop_sequence_json(reply)},
                                                 {"stop_details", reply.stop_details}}},
                                               {"usage", usage_json(reply.usage, false)}}));
  events.push_back(sse_event("message_stop", {{"type", "message_stop"}}));
  return events;
}

std::string anthropic_error_event(const std::string& error_type, const std::string& message,
                                  const std::string& request_id) {
  return sse_event("error", {{"type", "error"},
                             {"error", {{"type", error_type}, {"message", message}}},
                             {"request_id", request_id}});
}

}  // namespace loopr::mock_llm
