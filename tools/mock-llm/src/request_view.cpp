#include <mock_llm/request_view.hpp>

namespace loopr::mock_llm {
namespace {

void append_line(std::string& out, const std::string& text) {
  if (text.empty()) return;
  if (!out.empty()) out += '\n';
  out += text;
}

/// Text blocks only (tool results are matched separately through `tool_result`).
std::string user_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (!content.is_array()) return out;
  for (const auto& block : content)
    if (block.is_object() && block.value("type", "") == "text" && block.contains("text") &&
        block["text"].is_string())
      append_line(out, block["text"].get<std::string>());
  return out;
}

void read_headers(RequestView& v, const Headers& headers) {
  if (auto id = headers.get("x-loopr-loop-id")) v.loop_id = std::string(*id);
  if (auto type = headers.get("x-loopr-loop-type")) v.loop_type = std::string(*type);
}

}  // namespace

const std::string& RequestView::field(Field f) const {
  switch (f) {
    case Field::loop_type:
      return loop_type;
    case Field::loop_id:
      return loop_id;
    case Field::system:
      return system;
    case Field::user:
      return user;
    case Field::first_user:
      return first_user;
    case Field::tool_result:
      return tool_result;
    case Field::model:
      return model;
  }
  return user;
}

std::string content_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (!content.is_array()) return out;
  for (const auto& block : content) {
    if (!block.is_object()) continue;
    if (block.contains("text") && block["text"].is_string())
      append_line(out, block["text"].get<std::string>());
    else if (block.contains("content"))
      append_line(out, content_text(block["content"]));
  }
  return out;
}

RequestView view_anthropic(const Json& body, const Headers& headers) {
  RequestView v;
  v.api = Api::anthropic;
  read_headers(v, headers);
  v.model = body.value("model", "");
  v.stream = body.value("stream", false);
  if (body.contains("system")) v.system = content_text(body["system"]);
  bool seen_user = false;
  std::string previous_role;
  int assistant_turns = 0;
  for (const auto& m : body["messages"]) {
    const std::string role = m.value("role", "");
    const Json& content = m.contains("content") ? m["content"] : Json();
    if (role == "system") {
      append_line(v.system, content_text(content));
      continue;
    }
    // Consecutive same-role messages are one turn, as the service merges them.
    if (role == "assistant" && previous_role != "assistant") ++assistant_turns;
    if (role == "user") {
      if (!seen_user) v.first_user = user_text(content);
      seen_user = true;
      // A merged user turn: its text continues the previous user message's text.
      if (previous_role == "user")
        append_line(v.user, user_text(content));
      else
        v.user = user_text(content);
      if (content.is_array())
        for (const auto& block : content)
          if (block.is_object() && block.value("type", "") == "tool_result")
            v.tool_result = block.contains("content") ? content_text(block["content"]) : "";
    }
    previous_role = role;
  }
  v.turn = assistant_turns + 1;
  return v;
}

RequestView view_openai(const Json& body, const Headers& headers) {
  RequestView v;
  v.api = Api::openai;
  read_headers(v, headers);
  v.model = body.value("model", "");
  v.stream = body.value("stream", false);
  if (body.contains("stream_options") && body["stream_options"].is_object())
    v.include_usage = body["stream_options"].value("include_usage", false);
  bool seen_user = false;
  int assistant_turns = 0;
  for (const auto& m : body["messages"]) {
    const std::string role = m.value("role", "");
    const Json& content = m.contains("content") ? m["content"] : Json();
    if (role == "system" || role == "developer") {
      append_line(v.system, content_text(content));
    } else if (role == "user") {
      v.user = content_text(content);
      if (!seen_user) v.first_user = v.user;
      seen_user = true;
    } else if (role == "assistant") {
      ++assistant_turns;
    } else if (role == "tool") {
      v.tool_result = content_text(content);
    }
  }
  v.turn = assistant_turns + 1;
  return v;
}

// Input items: messages by role; each run of items the model made (assistant messages,
// reasoning, tool calls) between others is one assistant turn.
RequestView view_responses(const Json& body, const Headers& headers) {
  RequestView v;
  v.api = Api::responses;
  read_headers(v, headers);
  v.model = body.value("model", "");
  v.stream = body.value("stream", false);
  if (body.contains("instructions")) v.system = content_text(body["instructions"]);
  const Json& input = body["input"];
  if (input.is_string()) {
    v.user = v.first_user = input.get<std::string>();
    return v;
  }
  bool seen_user = false, in_model_run = false;
  int assistant_turns = 0;
  for (const auto& item : input) {
    const std::string type = item.value("type", "message");
    const std::string role = item.value("role", "");
    const bool by_model = (type == "message" && role == "assistant") || type == "reasoning" ||
                          type == "function_call" || type == "custom_tool_call" ||
                          type == "local_shell_call";
    if (by_model && !in_model_run) ++assistant_turns;
    in_model_run = by_model;
    if (type == "message" && (role == "system" || role == "developer")) {
      append_line(v.system, content_text(item["content"]));
    } else if (type == "message" && role == "user") {
      v.user = content_text(item["content"]);
      if (!seen_user) v.first_user = v.user;
      seen_user = true;
    } else if (type == "function_call_output" || type == "custom_tool_call_output") {
      v.tool_result = item.contains("output") ? content_text(item["output"]) : "";
    }
  }
  v.turn = assistant_turns + 1;
  return v;
}

}  // namespace loopr::mock_llm
