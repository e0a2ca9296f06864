// The Gemini API (generativelanguage: POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse): its checks (the 400s the service sends for missing contents,
// unknown roles, function calls left unanswered), the request read for matching, its answers
// (candidates with text and functionCall parts, finishReason, usageMetadata; a stream of
// `data:` chunks, the last with finishReason and usage) and its error JSON
// (`{"error":{code,message,status}}`).
#include <mock_llm/errors.hpp>
#include <mock_llm/render.hpp>
#include <mock_llm/request_view.hpp>
#include <mock_llm/text_util.hpp>
#include <mock_llm/validate.hpp>

namespace loopr::mock_llm {
namespace {

ApiError invalid(std::string message) {
  return ApiError{400, "INVALID_ARGUMENT", std::move(message), "", ""};
}

void append_line(std::string& out, const std::string& text) {
  if (text.empty()) return;
  if (!out.empty()) out += '\n';
  out += text;
}

/// The text parts of a content (thoughts excluded).
std::string parts_text(const Json& content) {
  std::string out;
  if (!content.is_object() || !content.contains("parts") || !content["parts"].is_array())
    return out;
  for (const auto& p : content["parts"])
    if (p.is_object() && p.contains("text") && p["text"].is_string() && !p.value("thought", false))
      append_line(out, p["text"].get<std::string>());
  return out;
}

std::size_t count_parts(const Json& content, const char* key) {
  std::size_t n = 0;
  if (content.contains("parts") && content["parts"].is_array())
    for (const auto& p : content["parts"])
      if (p.is_object() && p.contains(key)) ++n;
  return n;
}

std::string gemini_finish_reason(const std::string& stop_reason) {
  if (stop_reason == "max_tokens" || stop_reason == "model_context_window_exceeded")
    return "MAX_TOKENS";
  if (stop_reason == "refusal") return "SAFETY";
  return "STOP";
}

Json usage_metadata(const Usage& u) {
  const std::int64_t prompt =
      u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
  Json out = {{"promptTokenCount", prompt},
              {"candidatesTokenCount", u.output_tokens},
              {"totalTokenCount", prompt + u.output_tokens}};
  if (u.cache_read_input_tokens > 0) out["cachedContentTokenCount"] = u.cache_read_input_tokens;
  return out;
}

Json chunk(const Reply& reply, Json parts, const std::string& finish, bool usage) {
  Json candidate = {{"content", {{"role", "model"}, {"parts", std::move(parts)}}}, {"index", 0}};
  if (!finish.empty()) candidate["finishReason"] = finish;
  Json out = {{"candidates", Json::array({candidate})},
              {"modelVersion", reply.model},
              {"responseId", reply.id}};
  if (usage) out["usageMetadata"] = usage_metadata(reply.usage);
  return out;
}

Json call_parts(const Reply& reply) {
  Json parts = Json::array();
  for (const Block& b : reply.blocks)
    if (b.kind == BlockKind::tool_use)
      parts.push_back({{"functionCall", {{"id", b.id}, {"name", b.name}, {"args", b.input}}}});
  return parts;
}

std::string text_of(const Reply& reply) {
  std::string text;
  for (const Block& b : reply.blocks)
    if (b.kind == BlockKind::text) text += b.text;
  return text;
}

}  // namespace

std::string gemini_status(int status) {
  switch (status) {
    case 400:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 503:
    case 529:
      return "UNAVAILABLE";
    case 504:
      return "DEADLINE_EXCEEDED";
    default:
      return "INTERNAL";
  }
}

Json gemini_error_json(const ApiError& error, const std::string& retry_after) {
  Json out = {
      {"error",
       {{"code", error.status},
        {"message", error.message.empty() ? default_error_message(error.status) : error.message},
        {"status", gemini_status(error.status)}}}};
  if (!retry_after.empty())
    out["error"]["details"] = Json::array({{{"@type", "type.googleapis.com/google.rpc.RetryInfo"},
                                            {"retryDelay", retry_after + "s"}}});
  return out;
}

std::optional<ApiError> check_gemini_key(const Headers& headers, const std::string& target,
                                         const std::string& api_key) {
  std::string key;
  if (auto h = headers.get("x-goog-api-key")) key = std::string(*h);
  if (auto q = target.find("key="); key.empty() && q != std::string::npos)
    key = target.substr(q + 4, target.find('&', q) - q - 4);
  if (key.empty())
    return ApiError{403, "PERMISSION_DENIED",
                    "Method doesn't allow unregistered callers (callers without established "
                    "identity). Please use API Key or other form of API consumer identity to call "
                    "this API.",
                    "", ""};
  if (!api_key.empty() && key != api_key)
    return ApiError{400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                    "API_KEY_INVALID", ""};
  return std::nullopt;
}

std::optional<ApiError> check_gemini_body(const Json& body) {
  if (!body.is_object()) return invalid("Invalid JSON payload received. Expected an object.");
  if (!body.contains("contents") || !body["contents"].is_array() || body["contents"].empty())
    return invalid("* GenerateContentRequest.contents: contents is not specified\n");
  const Json& contents = body["contents"];
  std::size_t open_calls = 0;
  for (std::size_t i = 0; i < contents.size(); ++i) {
    const Json& c = contents[i];
    const std::string at = "contents[" + std::to_string(i) + "]";
    if (!c.is_object()) return invalid("Invalid value at '" + at + "': expected an object.");
    const std::string role = c.value("role", "user");
    if (role != "user" && role != "model" && role != "function")
      return invalid("Please use a valid role: user, model.");
    if (!c.contains("parts") || !c["parts"].is_array() || c["parts"].empty())
      return invalid("* GenerateContentRequest." + at +
                     ".parts: contents.parts must not be empty.\n");
    const std::size_t responses = count_parts(c, "functionResponse");
    if (open_calls > 0 && responses != open_calls)
      return invalid(
          "Please ensure that the number of function response parts is equal to the number of "
          "function call parts of the function call turn.");
    if (open_calls == 0 && responses > 0)
      return invalid(
          "Please ensure that function response turn comes immediately after a function call "
          "turn.");
    open_calls = role == "model" ? count_parts(c, "functionCall") : 0;
  }
  if (open_calls > 0)
    return invalid(
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn.");
  if (body.contains("tools") && body["tools"].is_array())
    for (const auto& tool : body["tools"])
      if (tool.is_object() && tool.contains("functionDeclarations"))
        for (const auto& f : tool["functionDeclarations"])
          if (!f.is_object() || !f.contains("name") || !f["name"].is_string())
            return invalid(
                "* GenerateContentRequest.tools[0].function_declarations[0].name: "
                "[FIELD_INVALID] Invalid function name.\n");
  return std::nullopt;
}

RequestView view_gemini(const Json& body, const Headers& headers, const std::string& model,
                        bool stream) {
  RequestView v;
  v.api = Api::gemini;
  if (auto id = headers.get("x-loopr-loop-id")) v.loop_id = std::string(*id);
  if (auto type = headers.get("x-loopr-loop-type")) v.loop_type = std::string(*type);
  v.model = model;
  v.stream = stream;
  if (body.contains("systemInstruction")) v.system = parts_text(body["systemInstruction"]);
  bool seen_user = false;
  int model_turns = 0;
  for (const auto& c : body["contents"]) {
    if (c.value("role", "user") == "model") {
      ++model_turns;
      continue;
    }
    for (const auto& p : c["parts"])
      if (p.is_object() && p.contains("functionResponse"))
        v.tool_result = to_wire(p["functionResponse"].value("response", Json::object()));
    std::string text = parts_text(c);
    if (text.empty() && count_parts(c, "functionResponse") > 0) continue;
    v.user = text;
    if (!seen_user) v.first_user = text;
    seen_user = true;
  }
  v.turn = model_turns + 1;
  return v;
}

Json gemini_response_json(const Reply& reply) {
  Json parts = Json::array();
  if (auto text = text_of(reply); !text.empty()) parts.push_back({{"text", text}});
  for (auto& p : call_parts(reply)) parts.push_back(std::move(p));
  if (parts.empty()) parts.push_back({{"text", ""}});
  return chunk(reply, std::move(parts), gemini_finish_reason(reply.stop_reason), true);
}

std::vector<std::string> gemini_sse(const Reply& reply, std::uint64_t seed) {
  std::vector<std::string> out;
  auto data = [&](const Json& j) { out.push_back("data: " + to_wire(j) + "\r\n\r\n"); };
  for (const auto& piece : split_utf8(text_of(reply), 8, 40, seed))
    data(chunk(reply, Json::array({{{"text", piece}}}), "", false));
  Json last = call_parts(reply);
  if (last.empty()) last.push_back({{"text", ""}});
  data(chunk(reply, std::move(last), gemini_finish_reason(reply.stop_reason), true));
  return out;
}

}  // namespace loopr::mock_llm
