#include <mock_llm/render.hpp>
#include <mock_llm/text_util.hpp>

namespace loopr::mock_llm {
namespace {

std::string text_of(const Reply& reply) {
  std::string text;
  for (const Block& b : reply.blocks)
    if (b.kind == BlockKind::text) text += b.text;
  return text;
}

std::string data_line(const Json& chunk) { return "data: " + to_wire(chunk) + "\n\n"; }

}  // namespace

std::string openai_finish_reason(const std::string& stop_reason) {
  if (stop_reason == "tool_use") return "tool_calls";
  if (stop_reason == "max_tokens" || stop_reason == "model_context_window_exceeded")
    return "length";
  if (stop_reason == "refusal") return "content_filter";
  return "stop";
}

Json openai_usage_json(const Usage& u) {
  const std::int64_t prompt =
      u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
  return {{"prompt_tokens", prompt},
          {"completion_tokens", u.output_tokens},
          {"total_tokens", prompt + u.output_tokens},
          {"prompt_tokens_details",
           {{"cached_tokens", u.cache_read_input_tokens}, {"audio_tokens", 0}}},
          {"completion_tokens_details",
           {{"reasoning_tokens", 0},
            {"audio_tokens", 0},
            {"accepted_prediction_tokens", 0},
            {"rejected_prediction_tokens", 0}}}};
}

Json openai_completion_json(const Reply& reply, std::int64_t created) {
  const std::string text = text_of(reply);
  const bool refusal = reply.stop_reason == "refusal";
  Json message = {{"role", "assistant"},
                  {"content", text.empty() || refusal ? Json(nullptr) : Json(text)},
                  {"refusal", refusal ? Json(text) : Json(nullptr)},
                  {"annotations", Json::array()}};
  Json calls = Json::array();
  for (const Block& b : reply.blocks)
    if (b.kind == BlockKind::tool_use)
      calls.push_back({{"id", b.id},
                       {"type", "function"},
                       {"function", {{"name", b.name}, {"arguments", b.input.dump()}}}});
  if (!calls.empty()) message["tool_calls"] = calls;
  return {{"id", reply.id},
          {"object", "chat.completion"},
          {"created", created},
          {"model", reply.model},
          {"choices", Json::array({{{"index", 0},
                                    {"message", message},
                                    {"logprobs", nullptr},
                                    {"finish_reason", openai_finish_reason(reply.stop_reason)}}})},
          {"usage", openai_usage_json(reply.usage)},
          {"service_tier", "default"},
          {"system_fingerprint", "fp_mock_llm"}};
}

std::vector<std::string> openai_sse(const Reply& reply, bool include_usage, std::int64_t created,
                                    std::uint64_t seed) {
  std::vector<std::string> out;
  // Every chunk shares its wrapper; only the delta and finish_reason differ. Writing the
  // wrapper once instead of building a JSON object per chunk saves most of the render cost.
  const Json head = {{"id", reply.id},
                     {"object", "chat.completion.chunk"},
                     {"created", created},
                     {"model", reply.model},
                     {"service_tier", "default"},
                     {"system_fingerprint", "fp_mock_llm"}};
  std::string prefix = to_wire(head);
  prefix.pop_back();  // reopen the object
  prefix += ",\"choices\":[{\"index\":0,\"delta\":";
  const std::string usage_field = include_usage ? ",\"usage\":null" : "";
  auto chunk = [&](const Json& delta, const Json& finish) {
    out.push_back("data: " + prefix + to_wire(delta) + ",\"logprobs\":null,\"finish_reason\":" +
                  to_wire(finish) + "}]" + usage_field + "}\n\n");
  };
  const bool refusal = reply.stop_reason == "refusal";
  chunk({{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}, nullptr);
  for (const auto& piece : split_utf8(text_of(reply), 8, 40, seed))
    chunk({{refusal ? "refusal" : "content", piece}}, nullptr);
  std::size_t index = 0;
  for (std::size_t i = 0; i < reply.blocks.size(); ++i) {
    const Block& b = reply.blocks[i];
    if (b.kind != BlockKind::tool_use) continue;
    chunk({{"tool_calls", Json::array({{{"index", index},
                                        {"id", b.id},
                                        {"type", "function"},
                                        {"function", {{"name", b.name}, {"arguments", ""}}}}})}},
          nullptr);
    const std::string args = to_wire(b.input);
    const std::size_t piece = std::max<std::size_t>(1, args.size() / 4);
    for (const auto& part :
         split_utf8(args, std::max<std::size_t>(1, piece / 2), piece + 1, seed + i))
      chunk(
          {{"tool_calls", Json::array({{{"index", index}, {"function", {{"arguments", part}}}}})}},
          nullptr);
    ++index;
  }
  chunk(Json::object(), openai_finish_reason(reply.stop_reason));
  if (include_usage) {
    Json c = {{"id", reply.id},
              {"object", "chat.completion.chunk"},
              {"created", created},
              {"model", reply.model},
              {"service_tier", "default"},
              {"system_fingerprint", "fp_mock_llm"},
              {"choices", Json::array()},
              {"usage", openai_usage_json(reply.usage)}};
    out.push_back(data_line(c));
  }
  out.push_back("data: [DONE]\n\n");
  return out;
}

}  // namespace loopr::mock_llm
