// The Anthropic Messages API (WIRE.md §1, version 2026-10-21): the request loopr sends, and
// responses read by block type — streamed or not — with every block kept as received so that
// thinking blocks, signatures and unknown blocks go back unchanged in the next turn.
#include <algorithm>
#include <map>

#include <loopr/core/text.hpp>

#include "llm/json_util.hpp"
#include "llm/prompt_cache.hpp"
#include "llm/wire.hpp"

namespace loopr::llm {

using nlohmann::json;

namespace {

const std::string kProvider = "anthropic";

}  // namespace

ContentBlock anthropic_block_from_json(const json& j) {
  ContentBlock b;
  b.raw = j;
  std::string type = string_field(j, "type");
  if (type == "text") {
    b.type = ContentBlock::Type::text;
    b.text = string_field(j, "text");
  } else if (type == "tool_use") {
    b.type = ContentBlock::Type::tool_use;
    b.id = string_field(j, "id");
    b.name = string_field(j, "name");
    b.input = j.contains("input") ? j["input"] : json::object();
  } else if (type == "thinking") {
    b.type = ContentBlock::Type::thinking;
    b.text = string_field(j, "thinking");
  } else if (type == "redacted_thinking") {
    b.type = ContentBlock::Type::redacted_thinking;
  } else {
    b.type = ContentBlock::Type::other;
  }
  return b;
}

namespace {

/// A block as the API wants it: verbatim if it came from the API, else built from its fields.
std::optional<json> block_to_json(const ContentBlock& b) {
  if (!b.raw.is_null()) return b.raw;
  switch (b.type) {
    case ContentBlock::Type::text:
      return json{{"type", "text"}, {"text", b.text}};
    case ContentBlock::Type::tool_use:
      return json{{"type", "tool_use"},
                  {"id", b.id},
                  {"name", b.name},
                  {"input", b.input.is_null() ? json::object() : b.input}};
    case ContentBlock::Type::tool_result:
      return json{{"type", "tool_result"},
                  {"tool_use_id", b.id},
                  {"content", b.text},
                  {"is_error", b.is_error}};
    default:
      return std::nullopt;  // thinking & co. only exist as received: never rebuilt
  }
}

void read_usage(const json& u, Usage& usage) {
  if (!u.is_object()) return;
  read_count(u, "input_tokens", usage.input_tokens);
  read_count(u, "output_tokens", usage.output_tokens);
  read_count(u, "cache_creation_input_tokens", usage.cache_write_tokens);
  read_count(u, "cache_read_input_tokens", usage.cache_read_tokens);
}

void read_stop(const json& j, Response& r) {
  if (auto it = j.find("stop_reason"); it != j.end() && it->is_string()) {
    r.stop_reason_text = it->get<std::string>();
    r.stop_reason = parse_stop_reason(r.stop_reason_text);
  }
  r.stop_sequence = string_field(j, "stop_sequence");
  if (auto it = j.find("stop_details"); it != j.end() && it->is_object()) r.stop_details = *it;
}

LlmError stream_error_event(const json& j) {
  LlmError e;
  const json& err = j.contains("error") && j["error"].is_object() ? j["error"] : j;
  e.type = string_field(err, "type");
  e.kind = e.type == "overloaded_error" ? ErrorKind::overloaded : ErrorKind::server;
  e.retryable = true;  // WIRE.md: an error event after HTTP 200 → retry the whole request
  e.message = kProvider + " reported an error in the middle of the stream (" + e.type +
              "): " + string_field(err, "message");
  e.request_id = string_field(j, "request_id");
  return e;
}

class AnthropicStream final : public StreamAssembler {
 public:
  std::optional<LlmError> on_event(const SseEvent& ev) override {
    if (ev.event == "ping") return std::nullopt;
    auto j = json::parse(ev.data, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return protocol_error(kProvider, "an event that is not JSON: " + ev.data.substr(0, 200));
    std::string type = ev.event.empty() ? string_field(j, "type") : ev.event;
    if (type == "message_start") {
      const json& m = j.contains("message") ? j["message"] : json::object();
      response_.id = string_field(m, "id");
      response_.model = string_field(m, "model");
      if (m.contains("usage")) read_usage(m["usage"], response_.usage);
    } else if (type == "content_block_start") {
      if (!j.contains("content_block") || !j["content_block"].is_object())
        return protocol_error(kProvider, "content_block_start without content_block");
      Partial& p = blocks_[index_of(j)];
      p.block = j["content_block"];
      p.text = string_field(p.block, "text");
      p.thinking = string_field(p.block, "thinking");
      p.signature = string_field(p.block, "signature");
    } else if (type == "content_block_delta") {
      auto it = blocks_.find(index_of(j));
      if (it == blocks_.end())
        return protocol_error(kProvider, "a delta for a block that was never started");
      apply_delta(it->second, j.contains("delta") ? j["delta"] : json::object());
    } else if (type == "content_block_stop") {
      auto it = blocks_.find(index_of(j));
      if (it == blocks_.end())
        return protocol_error(kProvider, "a stop for a block that was never started");
      if (auto err = close(it->second)) return err;
    } else if (type == "message_delta") {
      if (j.contains("delta") && j["delta"].is_object()) read_stop(j["delta"], response_);
      if (j.contains("usage")) read_usage(j["usage"], response_.usage);  // cumulative
    } else if (type == "message_stop") {
      for (auto& [index, p] : blocks_)
        if (!p.closed)
          if (auto err = close(p)) return err;
      done_ = true;
    } else if (type == "error") {
      return stream_error_event(j);
    }  // unknown events: ignored, as the API asks
    return std::nullopt;
  }

  bool complete() const override { return done_; }

  Response take_response() override {
    for (auto& [index, p] : blocks_)
      response_.content.push_back(anthropic_block_from_json(p.block));
    return std::move(response_);
  }

 private:
  struct Partial {
    json block;
    std::string text, thinking, signature, input_json;
    bool closed = false;
  };

  static int index_of(const json& j) {
    auto it = j.find("index");
    return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
  }

  static void apply_delta(Partial& p, const json& d) {
    std::string type = string_field(d, "type");
    if (type == "text_delta")
      p.text += string_field(d, "text");
    else if (type == "input_json_delta")
      p.input_json += string_field(d, "partial_json");
    else if (type == "thinking_delta")
      p.thinking += string_field(d, "thinking");
    else if (type == "signature_delta")
      p.signature += string_field(d, "signature");
    else if (type == "citations_delta" && d.contains("citation")) {
      if (!p.block["citations"].is_array()) p.block["citations"] = json::array();
      p.block["citations"].push_back(d["citation"]);
    }  // unknown deltas: ignored
  }

  /// Folds the deltas into the block, so it reads as the non-streamed API would send it.
  static std::optional<LlmError> close(Partial& p) {
    p.closed = true;
    std::string type = string_field(p.block, "type");
    if (type == "text") {
      p.block["text"] = p.text;
    } else if (type == "thinking") {
      p.block["thinking"] = p.thinking;
      p.block["signature"] = p.signature;
    } else if (type == "tool_use" && !p.input_json.empty()) {
      auto input = json::parse(p.input_json, nullptr, false);
      if (input.is_discarded())
        return protocol_error(kProvider, "tool input that is not JSON: " + p.input_json);
      p.block["input"] = std::move(input);
    }
    return std::nullopt;
  }

  Response response_;
  std::map<int, Partial> blocks_;  // by index: the order of the content array
  bool done_ = false;
};

class AnthropicWire final : public Wire {
 public:
  explicit AnthropicWire(WireSettings settings) : Wire(std::move(settings)) {}
  const std::string& provider() const override { return kProvider; }
  std::string_view request_id_header() const override { return "request-id"; }
  std::string_view stream_end_marker() const override { return "message_stop"; }

  std::variant<HttpRequest, LlmError> build(const Request& request, bool stream) const override {
    if (auto refused = check_conversation(request)) return *refused;
    json messages = json::array();
    for (const auto& m : request.messages) {
      json content = json::array();
      for (const auto& b : m.content) {
        auto j = block_to_json(b);
        if (!j)
          return refuse("a " + std::string(type_name(b.type)) +
                        " block that did not come from the API cannot be sent");
        content.push_back(std::move(*j));
      }
      messages.push_back(
          {{"role", m.role == Role::user ? "user" : "assistant"}, {"content", std::move(content)}});
    }
    // Never temperature/top_p/top_k (400 on 2026-10-21), never a forced tool choice.
    json body = {{"model", request.model.empty() ? settings_.model : request.model},
                 {"max_tokens", request.max_tokens.value_or(settings_.max_tokens)},
                 {"messages", std::move(messages)}};
    if (!request.system.empty())
      body["system"] = json::array({{{"type", "text"}, {"text", request.system}}});
    if (!request.tools.empty()) {
      json tools = json::array();
      for (const auto& t : request.tools)
        tools.push_back(
            {{"name", t.name}, {"description", t.description}, {"input_schema", t.input_schema}});
      body["tools"] = std::move(tools);
      body["tool_choice"] = {{"type", "auto"}};
    }
    if (stream) body["stream"] = true;
    if (settings_.cache) mark_cache_breakpoints(body, settings_.cache_ttl_1h);

    auto headers = settings_.bearer ? bearer(settings_.api_key)
                                    : std::vector<std::pair<std::string, std::string>>{};
    if (!settings_.bearer && !settings_.api_key.empty())
      headers.emplace_back("x-api-key", settings_.api_key);
    headers.emplace_back("anthropic-version", settings_.api_version);
    return json_request("/v1/messages", request, stream, body, std::move(headers));
  }

  std::variant<Response, LlmError> parse_response(std::string_view body) const override {
    auto parsed = json_object_body(kProvider, body);
    if (auto* error = std::get_if<LlmError>(&parsed)) return *error;
    json j = std::move(std::get<json>(parsed));
    if (string_field(j, "type") == "error") return stream_error_event(j);
    if (!j.contains("content") || !j["content"].is_array())
      return protocol_error(kProvider, "a message without a content array");
    Response r;
    r.id = string_field(j, "id");
    r.model = string_field(j, "model");
    for (const auto& block : j["content"]) r.content.push_back(anthropic_block_from_json(block));
    read_stop(j, r);
    if (j.contains("usage")) read_usage(j["usage"], r.usage);
    return r;
  }

  std::unique_ptr<StreamAssembler> start_stream() const override {
    return std::make_unique<AnthropicStream>();
  }

 private:
  static const char* type_name(ContentBlock::Type t) {
    switch (t) {
      case ContentBlock::Type::thinking:
        return "thinking";
      case ContentBlock::Type::redacted_thinking:
        return "redacted_thinking";
      default:
        return "unknown";
    }
  }

  static LlmError refuse(const std::string& why) {
    LlmError e;
    e.kind = ErrorKind::invalid_request;
    e.message = "loopr refused to send a malformed request (a bug in loopr): " + why;
    return e;
  }

  /// The API rejects these with a 400; catching them here names loopr's mistake plainly.
  static std::optional<LlmError> check_conversation(const Request& request) {
    if (request.messages.empty()) return refuse("no messages");
    if (request.messages.front().role != Role::user)
      return refuse("the first message is not from the user");
    // An assistant turn last is a prefill (refused by the API) unless it is a pause_turn answer
    // resent as received, which is how the API continues a paused turn.
    const Message& last = request.messages.back();
    bool resent = std::all_of(last.content.begin(), last.content.end(),
                              [](const ContentBlock& b) { return !b.raw.is_null(); });
    if (last.role != Role::user && !resent)
      return refuse("the last message is from the assistant (prefill is refused by the API)");
    for (const auto& m : request.messages)
      if (m.content.empty()) return refuse("a message without content");
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Wire> make_anthropic_wire(WireSettings settings) {
  return std::make_unique<AnthropicWire>(std::move(settings));
}

}  // namespace loopr::llm
