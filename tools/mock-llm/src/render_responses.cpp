// The OpenAI Responses API's answers: a `response` object whose `output` holds reasoning,
// message and function_call items, and its stream of typed events (response.created …
// response.output_text.delta … response.completed), each with a sequence_number.
#include <mock_llm/render.hpp>
#include <mock_llm/text_util.hpp>

namespace loopr::mock_llm {
namespace {

std::string item_id(std::string_view prefix, const Reply& reply, std::size_t index) {
  // Derived from the response id: stable for a seed, distinct per item.
  return std::string(prefix) + reply.id.substr(reply.id.size() > 24 ? reply.id.size() - 24 : 0) +
         std::to_string(index);
}

std::string text_of(const Reply& reply) {
  std::string text;
  for (const Block& b : reply.blocks)
    if (b.kind == BlockKind::text) text += b.text;
  return text;
}

/// The output items, in order: reasoning (from thinking), one message with all the text, the
/// function calls; `raw` blocks go as they are.
std::vector<Json> output_items(const Reply& reply) {
  std::vector<Json> items;
  const bool refusal = reply.stop_reason == "refusal";
  bool message_done = false;
  for (std::size_t i = 0; i < reply.blocks.size(); ++i) {
    const Block& b = reply.blocks[i];
    switch (b.kind) {
      case BlockKind::thinking: {
        Json summary = Json::array();
        if (!b.text.empty()) summary.push_back({{"type", "summary_text"}, {"text", b.text}});
        items.push_back({{"type", "reasoning"},
                         {"id", item_id("rs_", reply, i)},
                         {"summary", summary},
                         {"encrypted_content", b.signature}});
        break;
      }
      case BlockKind::text: {
        if (message_done) break;
        message_done = true;
        Json part = refusal ? Json{{"type", "refusal"}, {"refusal", text_of(reply)}}
                            : Json{{"type", "output_text"},
                                   {"text", text_of(reply)},
                                   {"annotations", Json::array()},
                                   {"logprobs", Json::array()}};
        items.push_back({{"type", "message"},
                         {"id", item_id("msg_", reply, i)},
                         {"status", "completed"},
                         {"role", "assistant"},
                         {"content", Json::array({part})}});
        break;
      }
      case BlockKind::tool_use:
        items.push_back({{"type", "function_call"},
                         {"id", item_id("fc_", reply, i)},
                         {"call_id", b.id},
                         {"name", b.name},
                         {"arguments", to_wire(b.input)},
                         {"status", "completed"}});
        break;
      case BlockKind::raw:
        items.push_back(b.input);
        break;
      case BlockKind::redacted_thinking:
        break;  // the Responses API has no such item
    }
  }
  return items;
}

}  // namespace

Json responses_usage_json(const Usage& u) {
  const std::int64_t input =
      u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
  return {{"input_tokens", input},
          {"input_tokens_details", {{"cached_tokens", u.cache_read_input_tokens}}},
          {"output_tokens", u.output_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", input + u.output_tokens}};
}

Json responses_json(const Reply& reply, std::int64_t created, bool finished) {
  const bool incomplete =
      reply.stop_reason == "max_tokens" || reply.stop_reason == "model_context_window_exceeded";
  Json output = Json::array();
  if (finished)
    for (auto& item : output_items(reply)) output.push_back(std::move(item));
  return {{"id", reply.id},
          {"object", "response"},
          {"created_at", created},
          {"status", !finished    ? "in_progress"
                     : incomplete ? "incomplete"
                                  : "completed"},
          {"error", nullptr},
          {"incomplete_details",
           finished && incomplete ? Json{{"reason", "max_output_tokens"}} : Json(nullptr)},
          {"model", reply.model},
          {"output", output},
          {"parallel_tool_calls", true},
          {"store", false},
          {"tool_choice", "auto"},
          {"usage", finished ? responses_usage_json(reply.usage) : Json(nullptr)}};
}

std::vector<std::string> responses_sse(const Reply& reply, std::int64_t created,
                                       std::uint64_t seed) {
  std::vector<std::string> out;
  std::int64_t seq = 0;
  auto emit = [&](const std::string& type, Json data) {
    data["type"] = type;
    data["sequence_number"] = seq++;
    out.push_back(sse_event(type, data));
  };
  emit("response.created", {{"response", responses_json(reply, created, false)}});
  emit("response.in_progress", {{"response", responses_json(reply, created, false)}});
  const std::vector<Json> items = output_items(reply);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Json& item = items[i];
    const std::string type = item.value("type", "");
    const std::string id = item.value("id", "");
    Json started = item;
    if (type == "message") started["content"] = Json::array();
    if (type == "function_call") started["arguments"] = "";
    if (started.contains("status")) started["status"] = "in_progress";
    emit("response.output_item.added", {{"output_index", i}, {"item", started}});
    if (type == "message") {
      const Json& part = item["content"][0];
      const bool refusal = part.value("type", "") == "refusal";
      const std::string text = part.value(refusal ? "refusal" : "text", "");
      Json empty = part;
      empty[refusal ? "refusal" : "text"] = "";
      Json where = {{"item_id", id}, {"output_index", i}, {"content_index", 0}};
      Json added = where;
      added["part"] = empty;
      emit("response.content_part.added", added);
      for (const auto& piece : split_utf8(text, 8, 40, seed + i)) {
        Json delta = where;
        delta["delta"] = piece;
        if (!refusal) delta["logprobs"] = Json::array();
        emit(refusal ? "response.refusal.delta" : "response.output_text.delta", delta);
      }
      Json done = where;
      done[refusal ? "refusal" : "text"] = text;
      emit(refusal ? "response.refusal.done" : "response.output_text.done", done);
      Json part_done = where;
      part_done["part"] = part;
      emit("response.content_part.done", part_done);
    } else if (type == "function_call") {
      const std::string args = item.value("arguments", "");
      const std::size_t piece = std::max<std::size_t>(1, args.size() / 4);
      for (const auto& part :
           split_utf8(args, std::max<std::size_t>(1, piece / 2), piece + 1, seed + i))
        emit("response.function_call_arguments.delta",
             {{"item_id", id}, {"output_index", i}, {"delta", part}});
      emit("response.function_call_arguments.done",
           {{"item_id", id}, {"output_index", i}, {"arguments", args}});
    }
    emit("response.output_item.done", {{"output_index", i}, {"item", item}});
  }
  Json last = responses_json(reply, created, true);
  emit(last["status"] == "incomplete" ? "response.incomplete" : "response.completed",
       {{"response", last}});
  return out;
}

std::string responses_error_event(const std::string& code, const std::string& message,
                                  std::int64_t sequence_number) {
  Json data = {{"type", "error"},
               {"code", code},
               {"message", message},
               {"param", nullptr},
               {"sequence_number", sequence_number}};
  return sse_event("error", data);
}

}  // namespace loopr::mock_llm
