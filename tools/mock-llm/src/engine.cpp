#include <chrono>
#include <limits>
#include <mock_llm/engine.hpp>
#include <mock_llm/errors.hpp>
#include <mock_llm/request_view.hpp>
#include <mock_llm/template.hpp>
#include <mock_llm/validate.hpp>

namespace loopr::mock_llm {
namespace {

/// "Half way", for random cut/stall faults whose position the script does not give.
constexpr std::size_t kAuto = std::numeric_limits<std::size_t>::max();

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string path_of(const std::string& target) { return target.substr(0, target.find('?')); }

/// `/v1beta/models/{model}:generateContent` (or :streamGenerateContent): the Gemini API.
bool is_gemini_path(const std::string& path) {
  return path.find("/models/") != std::string::npos &&
         (path.find(":generateContent") != std::string::npos ||
          path.find(":streamGenerateContent") != std::string::npos);
}

Api api_of_path(const std::string& path) {
  if (is_gemini_path(path)) return Api::gemini;
  if (path.find("/chat/completions") != std::string::npos) return Api::openai;
  if (path.find("/responses") != std::string::npos) return Api::responses;
  return Api::anthropic;
}

Json redacted_headers(const Headers& headers) {
  Json out = Json::object();
  for (const auto& [name, value] : headers.items) {
    if (name == "x-api-key" || name == "api-key") {
      out[name] = "[redacted]";
    } else if (name == "authorization") {
      auto space = value.find(' ');
      out[name] = (space == std::string::npos ? "" : value.substr(0, space + 1)) + "[redacted]";
    } else {
      out[name] = value;
    }
  }
  return out;
}

int status_for_error_type(const std::string& type) {
  if (type == "overloaded_error") return 529;
  if (type == "rate_limit_error") return 429;
  if (type == "timeout_error") return 504;
  return 500;
}

std::int64_t pick(std::optional<std::int64_t> a, std::optional<std::int64_t> b) {
  return a ? *a : b ? *b : 0;
}

/// Parses a request body into `out`; an error in the service's words if it is not JSON.
std::optional<ApiError> parse_body(const std::string& text, Json& out) {
  try {
    out = Json::parse(text);
    return std::nullopt;
  } catch (const Json::parse_error& e) {
    return ApiError{400, "", std::string("The request body is not valid JSON: ") + e.what(), "",
                    ""};
  }
}

}  // namespace

/// What one request turned into, for the log line.
struct Engine::Context {
  std::optional<Api> api;
  std::string request_id;
  Json body;  ///< parsed body, or the raw text when it is not JSON
  std::optional<std::string> rule;
  std::optional<std::string> fault;
  std::optional<std::string> error;  ///< the message of an error answer, for the log
  Millis event_delay{0};             ///< between streamed events, from the reply or the defaults
};

Engine::Engine(Script script, EngineOptions options, RequestLog* log)
    : script_(std::move(script)),
      options_(std::move(options)),
      log_(log),
      matcher_(script_),
      cache_(script_.defaults.cache_min_tokens),
      ids_(options_.seed.value_or(script_.faults.seed) ^ 0x6D6F636B2D6C6C6DULL),
      fault_draws_(options_.seed.value_or(script_.faults.seed)) {}

std::string Engine::new_id(std::string_view prefix, std::size_t length) {
  return std::string(prefix) + ids_.base62(length);
}

ResponsePlan Engine::handle(const HttpRequest& request) {
  Context ctx;
  ResponsePlan plan = route(request, ctx);
  log(request, ctx, plan);
  return plan;
}

ResponsePlan Engine::reject_too_large(const HttpRequest& request) {
  Context ctx;
  const std::string path = path_of(request.target);
  ctx.api = api_of_path(path);
  ctx.request_id = new_id("req_011C", 20);
  ctx.body = "[body over the 32 MB limit, not read]";
  ResponsePlan plan = error_plan({413, "", "", "", ""}, ctx);
  log(request, ctx, plan);
  return plan;
}

void Engine::log(const HttpRequest& request, const Context& ctx, const ResponsePlan& plan) {
  if (!log_) return;
  log_->append({{"t_ms", request.arrival_ms},
                {"api", ctx.api ? Json(to_string(*ctx.api)) : Json(nullptr)},
                {"method", request.method},
                {"path", request.target},
                {"headers", redacted_headers(request.headers)},
                {"body", ctx.body.is_null() ? Json(request.body) : ctx.body},
                {"rule", ctx.rule ? Json(*ctx.rule) : Json(nullptr)},
                {"status", plan.hang ? Json(nullptr) : Json(plan.status)},
                {"fault", ctx.fault ? Json(*ctx.fault) : Json(nullptr)},
                {"error", ctx.error ? Json(*ctx.error) : Json(nullptr)},
                {"request_id", ctx.request_id}});
}

ResponsePlan Engine::route(const HttpRequest& request, Context& ctx) {
  const std::string path = path_of(request.target);
  if (request.method == "GET" && (path == "/health" || path == "/healthz")) {
    ResponsePlan plan;
    plan.headers = {{"content-type", "text/plain"}};
    plan.body = "ok\n";
    return plan;
  }
  ctx.api = api_of_path(path);
  ctx.request_id = new_id("req_011C", 20);
  if (request.method == "POST" && path == "/v1/messages") return anthropic_messages(request, ctx);
  if (request.method == "POST" && path == "/v1/messages/count_tokens")
    return anthropic_count_tokens(request, ctx);
  if (request.method == "POST" && path == "/v1/chat/completions") return openai_chat(request, ctx);
  if (request.method == "POST" && path == "/v1/responses") return openai_responses(request, ctx);
  if (request.method == "POST" && is_gemini_path(path)) return gemini_generate(request, ctx, path);
  if (request.method == "GET" && path == "/v1/models") return list_models(request, ctx);
  return error_plan({404, "", "Not found: " + request.method + " " + path, "", ""}, ctx);
}

ResponsePlan Engine::error_plan(const ApiError& error, Context& ctx) const {
  ctx.error = error.message.empty() ? default_error_message(error.status) : error.message;
  ResponsePlan plan;
  plan.status = error.status;
  if (ctx.api == Api::gemini) {
    plan.body = to_wire(gemini_error_json(error));
    plan.headers = {{"content-type", "application/json; charset=UTF-8"}};
  } else if (ctx.api == Api::openai || ctx.api == Api::responses) {
    plan.body = to_wire(openai_error_json(error));
    plan.headers = {{"content-type", "application/json"}, {"x-request-id", ctx.request_id}};
  } else {
    plan.body = to_wire(anthropic_error_json(error, ctx.request_id));
    plan.headers = {{"content-type", "application/json"}, {"request-id", ctx.request_id}};
  }
  return plan;
}

ResponsePlan Engine::anthropic_messages(const HttpRequest& request, Context& ctx) {
  if (auto e = check_anthropic_headers(request.headers, options_.api_key))
    return error_plan(*e, ctx);
  if (auto e = parse_body(request.body, ctx.body)) return error_plan(*e, ctx);
  const std::string version(*request.headers.get("anthropic-version"));
  if (auto e = check_anthropic_body(ctx.body, version, conversations_)) return error_plan(*e, ctx);
  if (auto e = check_cache_breakpoints(ctx.body)) return error_plan(*e, ctx);
  // The cache is the key's: another key (another account, another repository's) reads nothing.
  std::string scope(request.headers.get("x-api-key").value_or(""));
  scope += request.headers.get("authorization").value_or("");
  return answer(view_anthropic(ctx.body, request.headers), ctx.body, ctx, scope);
}

ResponsePlan Engine::anthropic_count_tokens(const HttpRequest& request, Context& ctx) {
  if (auto e = check_anthropic_headers(request.headers, options_.api_key))
    return error_plan(*e, ctx);
  if (auto e = parse_body(request.body, ctx.body)) return error_plan(*e, ctx);
  if (!ctx.body.is_object() || !ctx.body.contains("messages"))
    return error_plan({400, "", "messages: Field required", "", ""}, ctx);
  ResponsePlan plan;
  plan.headers = {{"content-type", "application/json"}, {"request-id", ctx.request_id}};
  // About four bytes per token, like the service's tokenizer on English text.
  plan.body = to_wire({{"input_tokens", static_cast<std::int64_t>(request.body.size() / 4 + 1)}});
  return plan;
}

ResponsePlan Engine::openai_chat(const HttpRequest& request, Context& ctx) {
  if (auto e = check_openai_headers(request.headers, options_.api_key)) return error_plan(*e, ctx);
  if (auto e = parse_body(request.body, ctx.body)) return error_plan(*e, ctx);
  if (auto e = check_openai_body(ctx.body)) return error_plan(*e, ctx);
  return answer(view_openai(ctx.body, request.headers), ctx.body, ctx);
}

ResponsePlan Engine::openai_responses(const HttpRequest& request, Context& ctx) {
  if (auto e = check_openai_headers(request.headers, options_.api_key)) return error_plan(*e, ctx);
  if (auto e = parse_body(request.body, ctx.body)) return error_plan(*e, ctx);
  if (auto e = check_responses_body(ctx.body)) return error_plan(*e, ctx);
  return answer(view_responses(ctx.body, request.headers), ctx.body, ctx);
}

ResponsePlan Engine::gemini_generate(const HttpRequest& request, Context& ctx,
                                     const std::string& path) {
  if (auto e = check_gemini_key(request.headers, request.target, options_.api_key))
    return error_plan(*e, ctx);
  if (auto e = parse_body(request.body, ctx.body)) return error_plan(*e, ctx);
  if (auto e = check_gemini_body(ctx.body)) return error_plan(*e, ctx);
  const std::size_t from = path.find("/models/") + 8;
  const std::size_t colon = path.find(':', from);
  const std::string model = path.substr(from, colon - from);
  const bool stream = path.find(":streamGenerateContent") != std::string::npos;
  return answer(view_gemini(ctx.body, request.headers, model, stream), ctx.body, ctx);
}

// Both APIs list their models here; `loopr doctor` asks it to see the endpoint and the key work.
// A request with `anthropic-version` gets the Anthropic shape, any other the OpenAI one.
ResponsePlan Engine::list_models(const HttpRequest& request, Context& ctx) {
  bool anthropic = request.headers.get("anthropic-version").has_value();
  if (!anthropic) ctx.api = Api::openai;
  if (auto e = check_api_key(request.headers, options_.api_key)) return error_plan(*e, ctx);
  Json data = Json::array();
  for (const char* id : {"claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"}) {
    if (anthropic)
      data.push_back({{"type", "model"},
                      {"id", id},
                      {"display_name", id},
                      {"created_at", "2026-10-21T00:00:00Z"}});
    else
      data.push_back({{"id", id}, {"object", "model"}, {"created", 0}, {"owned_by", "loopr"}});
  }
  ResponsePlan plan;
  plan.headers = {{"content-type", "application/json"}, {"request-id", ctx.request_id}};
  plan.body = to_wire(anthropic ? Json{{"data", data},
                                       {"has_more", false},
                                       {"first_id", data.front()["id"]},
                                       {"last_id", data.back()["id"]}}
                                : Json{{"object", "list"}, {"data", data}});
  return plan;
}

ResponsePlan Engine::answer(const RequestView& view, const Json& body, Context& ctx,
                            const std::string& cache_scope) {
  auto outcome = matcher_.find(view);
  if (!outcome) {
    std::string message = std::string("mock-llm: no rule matches this request (api ") +
                          to_string(view.api) + ", loop_type \"" + view.loop_type +
                          "\", loop_id \"" + view.loop_id + "\", turn " +
                          std::to_string(view.turn) + ", model \"" + view.model +
                          "\"); last user text: \"" + utf8_prefix(view.user, 200) + "\"";
    if (view.user.empty() && !view.tool_result.empty())
      message += "; last tool result: \"" + utf8_prefix(view.tool_result, 200) + "\"";
    return error_plan({400, "", message, "", ""}, ctx);
  }
  const Rule& rule = script_.rules[outcome->rule_index];
  const ReplySpec& spec = rule.replies[outcome->reply_index];
  ctx.rule = rule.name;
  ctx.event_delay = spec.event_delay.count() >= 0 ? spec.event_delay : script_.defaults.event_delay;

  // A random fault answers instead of the reply and leaves the rule unconsumed, so the
  // client's retry gets the same scripted answer.
  std::optional<FaultSpec> fault = spec.fault;
  bool consumed = true;
  if (!fault && rule.random_faults && script_.faults.rate > 0 &&
      fault_draws_.unit() < script_.faults.rate) {
    const auto& kinds = script_.faults.kinds;
    fault = random_fault(kinds[fault_draws_.next() % kinds.size()]);
    consumed = false;
  }
  if (consumed) matcher_.consume(*outcome, view);
  Reply reply = resolve(spec, *outcome, view);
  if (fault && fault->kind() != "delay") return with_fault(*fault, reply, view, ctx);
  if (view.api == Api::anthropic && script_.defaults.prompt_cache) {
    CacheUsage c = cache_.account(body, cache_scope);
    reply.usage.input_tokens = c.input_tokens;
    reply.usage.cache_creation_input_tokens = c.cache_creation_input_tokens;
    reply.usage.cache_read_input_tokens = c.cache_read_input_tokens;
  }
  if (view.api == Api::anthropic)
    conversations_.record(body, anthropic_content_json(reply), reply.stop_reason);
  ResponsePlan plan = reply_plan(reply, view, ctx);
  if (fault) {
    ctx.fault = "delay";
    plan.delay += fault->delay;
  }
  return plan;
}

FaultSpec Engine::random_fault(const std::string& kind) const {
  FaultSpec f;
  if (kind == "cut_stream")
    f.cut_after_events = kAuto;
  else if (kind == "stall")
    f.stall_after_events = kAuto;
  else if (kind == "malformed_json")
    f.malformed_json = true;
  else if (kind == "error_event")
    f.error_event = "overloaded_error";
  else if (kind == "hang")
    f.hang = true;
  else {
    f.status = std::stoi(kind);
    if (*f.status == 429) f.retry_after = script_.faults.retry_after;
  }
  return f;
}

Reply Engine::resolve(const ReplySpec& spec, const MatchOutcome& outcome, const RequestView& view) {
  const bool openai = view.api != Api::anthropic;
  Reply r;
  r.id = view.api == Api::gemini      ? new_id("", 22)
         : view.api == Api::responses ? new_id("resp_", 48)
         : openai                     ? new_id("chatcmpl-", 29)
                                      : new_id("msg_01", 22);
  r.model = !spec.model.empty()               ? spec.model
            : !script_.defaults.model.empty() ? script_.defaults.model
                                              : view.model;
  bool has_tool_use = false;
  for (const BlockSpec& b : spec.blocks) {
    Block out;
    out.kind = b.kind;
    out.text = render_template(b.text, outcome.vars);
    switch (b.kind) {
      case BlockKind::thinking:
        out.signature = ids_.base64(96);
        break;
      case BlockKind::tool_use:
        has_tool_use = true;
        out.name = render_template(b.name, outcome.vars);
        out.input = render_json_templates(b.input, outcome.vars);
        out.id = !b.id.empty() ? render_template(b.id, outcome.vars)
                 : openai      ? new_id("call_", 24)
                               : new_id("toolu_01", 22);
        break;
      case BlockKind::raw:
        out.input = render_json_templates(b.input, outcome.vars);
        break;
      case BlockKind::redacted_thinking:
        // Opaque and unique, like the service's encrypted data.
        if (out.text.empty()) out.text = ids_.base64(96);
        break;
      case BlockKind::text:
        break;
    }
    r.blocks.push_back(std::move(out));
  }
  r.stop_reason = !spec.stop_reason.empty() ? spec.stop_reason
                  : has_tool_use            ? "tool_use"
                                            : "end_turn";
  r.stop_details = spec.stop_details;
  if (r.stop_details.is_null() && r.stop_reason == "refusal")
    r.stop_details = {{"type", "refusal"},
                      {"category", nullptr},
                      {"explanation", "The model declined this request (scripted refusal)."}};
  r.stop_sequence = render_template(spec.stop_sequence, outcome.vars);
  const UsageSpec& d = script_.defaults.usage;
  r.usage.input_tokens = pick(spec.usage.input_tokens, d.input_tokens);
  r.usage.output_tokens = pick(spec.usage.output_tokens, d.output_tokens);
  r.usage.cache_read_input_tokens =
      pick(spec.usage.cache_read_input_tokens, d.cache_read_input_tokens);
  r.usage.cache_creation_input_tokens =
      pick(spec.usage.cache_creation_input_tokens, d.cache_creation_input_tokens);
  return r;
}

ResponsePlan Engine::reply_plan(const Reply& reply, const RequestView& view, Context& ctx) {
  ResponsePlan plan;
  plan.delay = options_.latency.value_or(script_.defaults.latency);
  plan.event_delay = ctx.event_delay;
  const std::uint64_t seed = ids_.next();
  if (view.api == Api::anthropic) {
    plan.headers = {{"request-id", ctx.request_id},
                    {"anthropic-organization-id", "00000000-0000-4000-8000-00000000m0ck"}};
    if (view.stream) {
      plan.streaming = true;
      plan.events = anthropic_sse(reply, seed);
    } else {
      plan.body = to_wire(anthropic_message_json(reply));
    }
  } else if (view.api == Api::gemini) {
    if (view.stream) {
      plan.streaming = true;
      plan.events = gemini_sse(reply, seed);
    } else {
      plan.body = to_wire(gemini_response_json(reply));
    }
  } else if (view.api == Api::responses) {
    plan.headers = {{"x-request-id", ctx.request_id}};
    if (view.stream) {
      plan.streaming = true;
      plan.events = responses_sse(reply, now_seconds(), seed);
    } else {
      plan.body = to_wire(responses_json(reply, now_seconds(), true));
    }
  } else {
    plan.headers = {{"x-request-id", ctx.request_id}};
    Reply visible = reply;  // chat completions have no thinking blocks
    std::erase_if(visible.blocks, [](const Block& b) {
      return b.kind == BlockKind::thinking || b.kind == BlockKind::redacted_thinking ||
             b.kind == BlockKind::raw;
    });
    if (view.stream) {
      plan.streaming = true;
      plan.events = openai_sse(visible, view.include_usage, now_seconds(), seed);
    } else {
      plan.body = to_wire(openai_completion_json(visible, now_seconds()));
    }
  }
  if (plan.streaming) {
    plan.headers.emplace_back("content-type", "text/event-stream; charset=utf-8");
    plan.headers.emplace_back("cache-control", "no-cache");
  } else {
    plan.headers.emplace_back("content-type", "application/json");
  }
  return plan;
}

ResponsePlan Engine::with_fault(const FaultSpec& fault, const Reply& reply, const RequestView& view,
                                Context& ctx) {
  ctx.fault = fault.kind();
  const Millis latency = options_.latency.value_or(script_.defaults.latency);
  if (fault.hang) {
    ResponsePlan plan;
    plan.hang = true;
    return plan;
  }
  if (fault.status || (!fault.error_event.empty() && !view.stream)) {
    ApiError error;
    error.status = fault.status ? *fault.status : status_for_error_type(fault.error_event);
    error.type = fault.status ? fault.error_type : fault.error_event;
    error.code = fault.error_code;
    error.message = fault.message;
    ResponsePlan plan = error_plan(error, ctx);
    if (fault.retry_after && view.api == Api::gemini)  // Google says it in the body
      plan.body = to_wire(gemini_error_json(error, *fault.retry_after));
    if (fault.retry_after) plan.headers.emplace_back("retry-after", *fault.retry_after);
    if (fault.retry_after_ms)
      plan.headers.emplace_back("retry-after-ms", std::to_string(*fault.retry_after_ms));
    if (fault.should_retry)
      plan.headers.emplace_back("x-should-retry", *fault.should_retry ? "true" : "false");
    plan.delay = latency + fault.delay;
    return plan;
  }
  ResponsePlan plan = reply_plan(reply, view, ctx);
  plan.delay += fault.delay;
  const bool anthropic = view.api == Api::anthropic;
  if (!fault.error_event.empty()) {
    // HTTP 200, the start of the answer, then the error (the service's overloaded mid-stream).
    std::size_t keep = std::min(fault.cut_after_events.value_or(view.api == Api::openai ? 1 : 2),
                                plan.events.size() - 1);
    plan.events.resize(keep);
    const std::string message =
        fault.message.empty() ? default_error_message(status_for_error_type(fault.error_event))
                              : fault.message;
    if (anthropic) {
      plan.events.push_back(anthropic_error_event(fault.error_event, message, ctx.request_id));
    } else if (view.api == Api::gemini) {
      ApiError e{status_for_error_type(fault.error_event), "", message, "", ""};
      plan.events.push_back("data: " + to_wire(gemini_error_json(e)) + "\r\n\r\n");
    } else if (view.api == Api::responses) {
      plan.events.push_back(responses_error_event(
          fault.error_event == "rate_limit_error" ? "rate_limit_exceeded" : "server_error", message,
          static_cast<std::int64_t>(keep)));
    } else {
      ApiError e{status_for_error_type(fault.error_event), fault.error_event, message, "", ""};
      plan.events.push_back("data: " + to_wire(openai_error_json(e)) + "\n\n");
    }
    return plan;
  }
  if (fault.malformed_json) {
    if (plan.streaming) {
      // A well-framed event whose data is cut mid-JSON; the stream then ends without its end.
      plan.events.resize(1);
      plan.events.push_back(
          anthropic
              ? "event: content_block_delta\ndata: "
                "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del\n\n"
          : view.api == Api::gemini ? "data: {\"candidates\": [{\"content\r\n\r\n"
          : view.api == Api::responses
              ? "event: response.output_text.delta\ndata: {\"type\":\"response.output_te\n\n"
              : "data: {\"id\":\"" + reply.id + "\",\"object\":\"chat.completion.chu\n\n");
    } else {
      // A complete HTTP response whose body is not JSON: the first half of the real one.
      plan.body = plan.body.substr(0, plan.body.size() / 2);
    }
    return plan;
  }
  const std::size_t units = plan.streaming ? plan.events.size() : plan.body.size();
  // Cut or stall strictly before the end, so the answer is never complete.
  auto position = [&](std::size_t wanted) {
    std::size_t half = units / 2;
    // Event counts mean nothing in a plain body: it is always cut half way.
    std::size_t n = wanted == kAuto || !plan.streaming ? half : wanted;
    return std::min(n, units > 0 ? units - 1 : 0);
  };
  if (fault.cut_after_events) plan.cut_after = position(*fault.cut_after_events);
  if (fault.stall_after_events) plan.stall_after = position(*fault.stall_after_events);
  return plan;
}

}  // namespace loopr::mock_llm
