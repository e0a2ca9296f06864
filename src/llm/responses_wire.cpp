// The OpenAI Responses API (`POST /v1/responses`, issue 46) mapped onto loopr's request and
// response: messages ↔ input items, tool_use ↔ `function_call` items (matched by `call_id`),
// tool_result ↔ `function_call_output`, reasoning ↔ `reasoning` items, the response's status
// ↔ the stop reason. Requests are stateless (`store: false`): the whole conversation goes every
// time, items read from a response are sent back as received (without their server ids, which
// a stateless request may not name), reasoning only when it carries its encrypted content.
#include <loopr/core/text.hpp>

#include "llm/json_util.hpp"
#include "llm/prompt_cache.hpp"
#include "llm/wire.hpp"

namespace loopr::llm {

using nlohmann::json;

namespace {

const std::string kProvider = "openai-responses";

ContentBlock block_from_item(const json& item) {
  const std::string type = string_field(item, "type");
  ContentBlock b;
  b.raw = item;
  if (type == "function_call") {
    const std::string args = string_field(item, "arguments");
    json input = args.empty() ? json::object() : json::parse(args, nullptr, false);
    if (input.is_discarded()) input = args;  // the tool router answers with a readable error
    b.type = ContentBlock::Type::tool_use;
    b.id = string_field(item, "call_id");
    b.name = string_field(item, "name");
    b.input = std::move(input);
  } else if (type == "message") {
    b.type = ContentBlock::Type::text;
    if (item.contains("content") && item["content"].is_array())
      for (const auto& part : item["content"])
        if (string_field(part, "type") == "output_text") b.text += string_field(part, "text");
  } else if (type == "reasoning") {
    b.type = ContentBlock::Type::thinking;
    if (item.contains("summary") && item["summary"].is_array())
      for (const auto& part : item["summary"]) b.text += string_field(part, "text");
  } else {
    b.type = ContentBlock::Type::other;
  }
  return b;
}

/// The refusal text of a message item (a `refusal` content part), or "".
std::string refusal_of(const json& item) {
  std::string out;
  if (string_field(item, "type") == "message" && item.contains("content") &&
      item["content"].is_array())
    for (const auto& part : item["content"])
      if (string_field(part, "type") == "refusal") out += string_field(part, "refusal");
  return out;
}

void read_usage(const json& u, Usage& usage) {
  if (!u.is_object()) return;
  std::int64_t input = 0, cached = 0;
  read_count(u, "input_tokens", input);
  read_count(u, "output_tokens", usage.output_tokens);
  if (u.contains("input_tokens_details"))
    read_count(u["input_tokens_details"], "cached_tokens", cached);
  // input_tokens includes the cached part; loopr counts uncached input and cache reads apart.
  usage.input_tokens = input - cached;
  usage.cache_read_tokens = cached;
}

LlmError failed_error(const json& err, const std::string& where) {
  LlmError e;
  e.kind = ErrorKind::server;
  e.retryable = true;
  e.type = string_field(err, "type");
  e.error_code = string_field(err, "code");
  std::string label = !e.error_code.empty() ? e.error_code : e.type;
  e.message = kProvider + " reported an error " + where +
              (label.empty() ? "" : " (" + label + ")") + ": " + string_field(err, "message");
  if (e.error_code == "rate_limit_exceeded") e.kind = ErrorKind::rate_limited;
  if (e.error_code == "context_length_exceeded" || e.error_code == "invalid_prompt") {
    e.kind = ErrorKind::invalid_request;
    e.retryable = false;
  }
  return e;
}

/// A whole `response` object (the body, or the one a terminal stream event carries) read as
/// loopr's Response; `streamed_items` stands in when the object's `output` is empty.
std::variant<Response, LlmError> read_response(const json& j, const std::vector<json>& streamed) {
  const std::string status = string_field(j, "status");
  if (status == "failed") {
    const json& err = j.contains("error") && j["error"].is_object() ? j["error"] : json::object();
    return failed_error(err, "for this response");
  }
  Response r;
  r.id = string_field(j, "id");
  r.model = string_field(j, "model");
  const json* output = j.contains("output") && j["output"].is_array() ? &j["output"] : nullptr;
  std::string refusal;
  auto take = [&](const json& item) {
    if (!item.is_object()) return;
    refusal += refusal_of(item);
    r.content.push_back(block_from_item(item));
  };
  if (output && !output->empty())
    for (const auto& item : *output) take(item);
  else
    for (const auto& item : streamed) take(item);
  if (j.contains("usage")) read_usage(j["usage"], r.usage);
  std::string reason;
  if (j.contains("incomplete_details") && j["incomplete_details"].is_object())
    reason = string_field(j["incomplete_details"], "reason");
  r.stop_reason_text = status == "incomplete" ? "incomplete:" + reason : status;
  if (status == "incomplete")
    r.stop_reason = reason == "max_output_tokens" ? StopReason::max_tokens
                    : reason == "content_filter"  ? StopReason::refusal
                                                  : StopReason::unknown;
  else if (status == "completed" || status.empty())
    r.stop_reason = r.tool_uses().empty() ? StopReason::end_turn : StopReason::tool_use;
  else
    r.stop_reason = StopReason::unknown;
  if (!refusal.empty() || r.stop_reason == StopReason::refusal) {
    r.stop_reason = StopReason::refusal;
    r.stop_details = {{"type", "refusal"}, {"category", nullptr}, {"explanation", refusal}};
  }
  return r;
}

class ResponsesStream final : public StreamAssembler {
 public:
  std::optional<LlmError> on_event(const SseEvent& ev) override {
    auto j = json::parse(ev.data, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return protocol_error(kProvider, "an event that is not JSON: " + ev.data.substr(0, 200));
    std::string type = string_field(j, "type");
    if (type.empty()) type = ev.event;
    if (type == "error") return failed_error(j, "in the middle of the stream");
    if (type == "response.output_item.done" && j.contains("item")) {
      items_.push_back(j["item"]);
    } else if (type == "response.completed" || type == "response.incomplete" ||
               type == "response.failed") {
      if (!j.contains("response") || !j["response"].is_object())
        return protocol_error(kProvider, type + " without its response");
      auto read = read_response(j["response"], items_);
      if (auto* e = std::get_if<LlmError>(&read)) return std::move(*e);
      response_ = std::get<Response>(std::move(read));
      done_ = true;
    }
    return std::nullopt;  // deltas: the finished items carry the same text
  }

  bool complete() const override { return done_; }
  Response take_response() override { return std::move(response_); }

 private:
  std::vector<json> items_;
  Response response_;
  bool done_ = false;
};

/// An item read from a response, as a stateless request may send it back: no server id
/// (`msg_…`/`fc_…` exist only in stored responses), no status.
json echo_item(json item) {
  if (string_field(item, "type") != "reasoning") item.erase("id");
  item.erase("status");
  return item;
}

class ResponsesWire final : public Wire {
 public:
  explicit ResponsesWire(WireSettings settings) : Wire(std::move(settings)) {}
  const std::string& provider() const override { return kProvider; }
  std::string_view request_id_header() const override { return "x-request-id"; }
  std::string_view stream_end_marker() const override { return "response.completed"; }

  std::variant<HttpRequest, LlmError> build(const Request& request, bool stream) const override {
    if (auto refused = refuse_unless_user_last(request)) return *refused;
    json input = json::array();
    for (const auto& m : request.messages) append_items(m, input);
    json body = {{"model", request.model.empty() ? settings_.model : request.model},
                 {"input", std::move(input)},
                 {"max_output_tokens", request.max_tokens.value_or(settings_.max_tokens)},
                 {"store", false},
                 {"include", json::array({"reasoning.encrypted_content"})}};
    if (!request.system.empty()) body["instructions"] = request.system;
    if (!request.tools.empty()) {
      json tools = json::array();
      for (const auto& t : request.tools)
        tools.push_back({{"type", "function"},
                         {"name", t.name},
                         {"description", t.description},
                         {"parameters", t.input_schema},
                         {"strict", false}});
      body["tools"] = std::move(tools);
      body["tool_choice"] = "auto";
    }
    if (stream) body["stream"] = true;
    // OpenAI caches byte-identical prefixes by itself; the key keeps one loop's turns on the
    // same cache (llm.cache: off leaves it out).
    if (settings_.cache && !request.loop_id.empty())
      body["prompt_cache_key"] = prompt_cache_key(request.working_dir, request.loop_id);
    return json_request("/v1/responses", request, stream, body, bearer(settings_.api_key));
  }

  std::variant<Response, LlmError> parse_response(std::string_view body) const override {
    auto parsed = json_object_body(kProvider, body);
    if (auto* error = std::get_if<LlmError>(&parsed)) return *error;
    json j = std::move(std::get<json>(parsed));
    if (j.contains("error") && j["error"].is_object() && string_field(j, "status").empty())
      return failed_error(j["error"], "in its answer");
    if (!j.contains("output") || !j["output"].is_array())
      return protocol_error(kProvider, "a response without `output`");
    return read_response(j, {});
  }

  std::unique_ptr<StreamAssembler> start_stream() const override {
    return std::make_unique<ResponsesStream>();
  }

 private:
  /// One loopr message → input items. Assistant blocks read from a response go back as they
  /// came (reasoning only with its encrypted content: without it a stateless request cannot
  /// name it); blocks loopr made are built. Tool results become function_call_output items.
  static void append_items(const Message& m, json& out) {
    if (m.role == Role::assistant) {
      for (const auto& b : m.content) {
        if (!b.raw.is_null() && b.raw.is_object()) {
          if (b.type == ContentBlock::Type::thinking && !b.raw.contains("encrypted_content"))
            continue;
          out.push_back(echo_item(b.raw));
        } else if (b.type == ContentBlock::Type::text && !b.text.empty()) {
          out.push_back({{"type", "message"},
                         {"role", "assistant"},
                         {"content", json::array({{{"type", "output_text"}, {"text", b.text}}})}});
        } else if (b.type == ContentBlock::Type::tool_use) {
          out.push_back({{"type", "function_call"},
                         {"call_id", b.id},
                         {"name", b.name},
                         {"arguments", json_text(b.input)}});
        }
      }
      return;
    }
    json parts = json::array();
    for (const auto& b : m.content) {
      if (b.type == ContentBlock::Type::tool_result)
        // No is_error flag in function_call_output: the model reads the failure in the text.
        out.push_back({{"type", "function_call_output"},
                       {"call_id", b.id},
                       {"output", b.is_error ? "ERROR: " + b.text : b.text}});
      else if (b.type == ContentBlock::Type::text)
        parts.push_back({{"type", "input_text"}, {"text", b.text}});
    }
    if (!parts.empty())
      out.push_back({{"type", "message"}, {"role", "user"}, {"content", std::move(parts)}});
  }
};

}  // namespace

std::unique_ptr<Wire> make_responses_wire(WireSettings settings) {
  return std::make_unique<ResponsesWire>(std::move(settings));
}

}  // namespace loopr::llm
