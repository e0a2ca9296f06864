// OpenAI-compatible chat completions (WIRE.md §2; OpenAI, llama.cpp, vLLM, Ollama) mapped onto
// loopr's request and response: tool_use ↔ tool_calls, tool_result ↔ `tool` messages,
// finish_reason ↔ stop reason, and streamed tool-call fragments assembled by index.
#include <map>

#include <loopr/core/text.hpp>

#include "llm/json_util.hpp"
#include "llm/prompt_cache.hpp"
#include "llm/wire.hpp"

namespace loopr::llm {

using nlohmann::json;

namespace {

const std::string kProvider = "openai";

/// A tool call as a block; `raw` keeps the call as received so the arguments string goes back
/// byte for byte. Unparseable arguments (small local models) stay a JSON string in `input`:
/// the tool router then answers with an error the model can read.
ContentBlock tool_use_from_call(const std::string& id, const std::string& name,
                                const std::string& arguments) {
  json input = arguments.empty() ? json::object() : json::parse(arguments, nullptr, false);
  if (input.is_discarded()) input = arguments;
  ContentBlock b = ContentBlock::make_tool_use(id, name, std::move(input));
  b.raw = {
      {"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}};
  return b;
}

void read_usage(const json& u, Usage& usage) {
  if (!u.is_object()) return;
  std::int64_t prompt = 0, cached = 0;
  read_count(u, "prompt_tokens", prompt);
  read_count(u, "completion_tokens", usage.output_tokens);
  if (u.contains("prompt_tokens_details"))
    read_count(u["prompt_tokens_details"], "cached_tokens", cached);
  // prompt_tokens includes the cached part; loopr counts uncached input and cache reads apart.
  usage.input_tokens = prompt - cached;
  usage.cache_read_tokens = cached;
}

void finish(Response& r, const std::string& finish_reason, const std::string& refusal) {
  r.stop_reason_text = finish_reason;
  if (finish_reason == "stop")
    r.stop_reason = StopReason::end_turn;
  else if (finish_reason == "length")
    r.stop_reason = StopReason::max_tokens;
  else if (finish_reason == "tool_calls" || finish_reason == "function_call")
    r.stop_reason = StopReason::tool_use;
  else if (finish_reason == "content_filter")
    r.stop_reason = StopReason::refusal;
  else
    r.stop_reason = StopReason::unknown;
  // Some local servers say "stop" although they asked for tools: the calls are what counts.
  if (!r.tool_uses().empty() && r.stop_reason == StopReason::end_turn)
    r.stop_reason = StopReason::tool_use;
  if (!refusal.empty()) {
    r.stop_reason = StopReason::refusal;
    r.stop_details = {{"type", "refusal"}, {"category", nullptr}, {"explanation", refusal}};
  }
}

LlmError stream_error(const json& j) {
  const json& err = j.contains("error") && j["error"].is_object() ? j["error"] : j;
  LlmError e;
  e.kind = ErrorKind::server;
  e.retryable = true;
  e.type = string_field(err, "type");
  e.error_code = string_field(err, "code");
  e.message = kProvider + " reported an error in the middle of the stream" +
              (e.type.empty() ? "" : " (" + e.type + ")") + ": " + string_field(err, "message");
  return e;
}

class OpenAiStream final : public StreamAssembler {
 public:
  std::optional<LlmError> on_event(const SseEvent& ev) override {
    if (ev.data == "[DONE]") {
      if (finish_reason_.empty()) return protocol_error(kProvider, "[DONE] before a finish_reason");
      done_ = true;
      return std::nullopt;
    }
    auto j = json::parse(ev.data, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return protocol_error(kProvider, "a chunk that is not JSON: " + ev.data.substr(0, 200));
    if (ev.event == "error" || j.contains("error")) return stream_error(j);
    if (response_.id.empty()) response_.id = string_field(j, "id");
    if (response_.model.empty()) response_.model = string_field(j, "model");
    if (j.contains("usage")) read_usage(j["usage"], response_.usage);  // the include_usage chunk
    if (!j.contains("choices") || !j["choices"].is_array()) return std::nullopt;
    for (const auto& choice : j["choices"]) {
      if (!choice.is_object()) continue;
      if (auto i = choice.find("index"); i != choice.end() && *i != 0)
        continue;  // one choice asked
      if (auto f = string_field(choice, "finish_reason"); !f.empty()) finish_reason_ = f;
      if (!choice.contains("delta") || !choice["delta"].is_object()) continue;
      const json& d = choice["delta"];
      text_ += string_field(d, "content");
      refusal_ += string_field(d, "refusal");
      if (d.contains("tool_calls") && d["tool_calls"].is_array())
        for (const auto& tc : d["tool_calls"]) add_fragment(tc);
    }
    return std::nullopt;
  }

  bool complete() const override { return done_; }

  Response take_response() override {
    if (!text_.empty()) response_.content.push_back(ContentBlock::make_text(text_));
    for (const auto& c : calls_)
      response_.content.push_back(tool_use_from_call(c.id, c.name, c.arguments));
    finish(response_, finish_reason_, refusal_);
    return std::move(response_);
  }

 private:
  struct Call {
    std::string id, name, arguments;
  };

  /// The first fragment of a call carries id and name, later ones more `arguments`. A new id
  /// at an index in use starts a new call: some servers send every call at index 0.
  void add_fragment(const json& tc) {
    int index =
        tc.contains("index") && tc["index"].is_number_integer() ? tc["index"].get<int>() : 0;
    std::string id = string_field(tc, "id");
    auto it = slot_.find(index);
    if (it == slot_.end() ||
        (!id.empty() && !calls_[it->second].id.empty() && calls_[it->second].id != id)) {
      calls_.push_back(Call{});
      it = slot_.insert_or_assign(index, calls_.size() - 1).first;
    }
    Call& call = calls_[it->second];
    if (call.id.empty()) call.id = id;
    if (tc.contains("function") && tc["function"].is_object()) {
      const json& fn = tc["function"];
      if (call.name.empty()) call.name = string_field(fn, "name");
      call.arguments += string_field(fn, "arguments");
    }
  }

  Response response_;
  std::string text_, refusal_, finish_reason_;
  std::vector<Call> calls_;
  std::map<int, std::size_t> slot_;  // stream index → position in calls_
  bool done_ = false;
};

class OpenAiWire final : public Wire {
 public:
  explicit OpenAiWire(WireSettings settings) : Wire(std::move(settings)) {}
  const std::string& provider() const override { return kProvider; }
  std::string_view request_id_header() const override { return "x-request-id"; }
  std::string_view stream_end_marker() const override { return "data: [DONE]"; }

  std::variant<HttpRequest, LlmError> build(const Request& request, bool stream) const override {
    if (auto refused = refuse_unless_user_last(request)) return *refused;
    json messages = json::array();
    if (!request.system.empty())
      messages.push_back({{"role", "system"}, {"content", request.system}});
    for (const auto& m : request.messages) append_message(m, messages);
    json body = {{"model", request.model.empty() ? settings_.model : request.model},
                 {"messages", std::move(messages)},
                 {settings_.max_tokens_field, request.max_tokens.value_or(settings_.max_tokens)}};
    if (!request.tools.empty()) {
      json tools = json::array();
      for (const auto& t : request.tools)
        tools.push_back(
            {{"type", "function"},
             {"function",
              {{"name", t.name}, {"description", t.description}, {"parameters", t.input_schema}}}});
      body["tools"] = std::move(tools);
      body["tool_choice"] = "auto";
    }
    if (stream) {
      body["stream"] = true;
      body["stream_options"] = {{"include_usage", true}};
    }
    // The server caches byte-identical prefixes by itself; the key keeps one loop's turns on
    // the same cache (llm.cache: off leaves it out, for servers that refuse unknown fields).
    if (settings_.cache && !request.loop_id.empty())
      body["prompt_cache_key"] = prompt_cache_key(request.working_dir, request.loop_id);
    return json_request("/v1/chat/completions", request, stream, body, bearer(settings_.api_key));
  }

  std::variant<Response, LlmError> parse_response(std::string_view body) const override {
    auto parsed = json_object_body(kProvider, body);
    if (auto* error = std::get_if<LlmError>(&parsed)) return *error;
    json j = std::move(std::get<json>(parsed));
    if (j.contains("error")) return stream_error(j);
    if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() ||
        !j["choices"][0].contains("message"))
      return protocol_error(kProvider, "a completion without choices[0].message");
    const json& choice = j["choices"][0];
    const json& msg = choice["message"];
    Response r;
    r.id = string_field(j, "id");
    r.model = string_field(j, "model");
    if (auto text = string_field(msg, "content"); !text.empty())
      r.content.push_back(ContentBlock::make_text(std::move(text)));
    if (msg.contains("tool_calls") && msg["tool_calls"].is_array()) {
      for (const auto& tc : msg["tool_calls"]) {
        const json& fn = tc.contains("function") ? tc["function"] : json::object();
        r.content.push_back(tool_use_from_call(string_field(tc, "id"), string_field(fn, "name"),
                                               string_field(fn, "arguments")));
      }
    }
    finish(r, string_field(choice, "finish_reason"), string_field(msg, "refusal"));
    if (j.contains("usage")) read_usage(j["usage"], r.usage);
    return r;
  }

  std::unique_ptr<StreamAssembler> start_stream() const override {
    return std::make_unique<OpenAiStream>();
  }

 private:
  /// One loopr message → chat messages: tool results become `tool` messages (first, since they
  /// must follow the assistant's tool_calls), other text a user message.
  static void append_message(const Message& m, json& out) {
    std::string text;
    if (m.role == Role::assistant) {
      json calls = json::array();
      for (const auto& b : m.content) {
        if (b.type == ContentBlock::Type::text) text += b.text;
        if (b.type != ContentBlock::Type::tool_use) continue;
        if (!b.raw.is_null())
          calls.push_back(b.raw);
        else
          calls.push_back({{"id", b.id},
                           {"type", "function"},
                           {"function", {{"name", b.name}, {"arguments", json_text(b.input)}}}});
      }
      json msg = {{"role", "assistant"}, {"content", text.empty() ? json(nullptr) : json(text)}};
      if (!calls.empty()) msg["tool_calls"] = std::move(calls);
      out.push_back(std::move(msg));
      return;
    }
    for (const auto& b : m.content) {
      if (b.type == ContentBlock::Type::tool_result)
        // Chat completions have no is_error flag: the model reads the failure in the text.
        out.push_back({{"role", "tool"},
                       {"tool_call_id", b.id},
                       {"content", b.is_error ? "ERROR: " + b.text : b.text}});
      else if (b.type == ContentBlock::Type::text)
        text += text.empty() ? b.text : "\n\n" + b.text;
    }
    if (!text.empty()) out.push_back({{"role", "user"}, {"content", text}});
  }
};

}  // namespace

std::unique_ptr<Wire> make_openai_wire(WireSettings settings) {
  return std::make_unique<OpenAiWire>(std::move(settings));
}

}  // namespace loopr::llm
