// The heart of mock-llm, free of sockets: one HTTP request in, a plan of what to send out
// (status, headers, body or SSE events, delays, where to cut or stall). It validates the
// request like the real service, matches the script, renders the reply, injects faults and
// logs the request. The server (server.hpp) only carries out the plan.
#pragma once

#include <cstdint>
#include <mock_llm/conversation_registry.hpp>
#include <mock_llm/errors.hpp>
#include <mock_llm/matcher.hpp>
#include <mock_llm/prompt_cache.hpp>
#include <mock_llm/render.hpp>
#include <mock_llm/request_log.hpp>
#include <mock_llm/script.hpp>
#include <mock_llm/text_util.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loopr::mock_llm {

struct HttpRequest {
  std::string method;
  std::string target;  ///< path and query, e.g. /v1/messages?beta=true
  Headers headers;     ///< lower-case names
  std::string body;
  std::int64_t arrival_ms = 0;  ///< epoch milliseconds
};

struct ResponsePlan {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  ///< content-type included
  bool streaming = false;
  std::string body;                 ///< when not streaming
  std::vector<std::string> events;  ///< when streaming: whole SSE frames
  Millis delay{0};                  ///< before the headers
  Millis event_delay{0};            ///< between events
  /// Close the connection after this many events (streaming) or body bytes (not streaming).
  std::optional<std::size_t> cut_after;
  /// Go silent (keep the connection open) after this many events or body bytes.
  std::optional<std::size_t> stall_after;
  bool hang = false;  ///< send nothing at all
};

struct EngineOptions {
  std::string api_key;                ///< empty: any non-empty key is accepted
  std::optional<std::uint64_t> seed;  ///< overrides faults.seed (ids and fault draws)
  std::optional<Millis> latency;      ///< overrides defaults.latency
};

class Engine {
 public:
  /// `log` (may be null) must outlive the engine.
  Engine(Script script, EngineOptions options, RequestLog* log = nullptr);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  ResponsePlan handle(const HttpRequest& request);

  /// The answer to a request whose body is over the service's 32 MB limit (not read).
  ResponsePlan reject_too_large(const HttpRequest& request);

 private:
  struct Context;

  ResponsePlan route(const HttpRequest& request, Context& ctx);
  void log(const HttpRequest& request, const Context& ctx, const ResponsePlan& plan);
  ResponsePlan anthropic_messages(const HttpRequest& request, Context& ctx);
  ResponsePlan anthropic_count_tokens(const HttpRequest& request, Context& ctx);
  ResponsePlan openai_chat(const HttpRequest& request, Context& ctx);
  ResponsePlan openai_responses(const HttpRequest& request, Context& ctx);
  ResponsePlan gemini_generate(const HttpRequest& request, Context& ctx, const std::string& path);
  ResponsePlan list_models(const HttpRequest& request, Context& ctx);
  ResponsePlan answer(const RequestView& view, const Json& body, Context& ctx,
                      const std::string& cache_scope = {});
  ResponsePlan error_plan(const ApiError& error, Context& ctx) const;
  ResponsePlan with_fault(const FaultSpec& fault, const Reply& reply, const RequestView& view,
                          Context& ctx);
  ResponsePlan reply_plan(const Reply& reply, const RequestView& view, Context& ctx);
  Reply resolve(const ReplySpec& spec, const MatchOutcome& outcome, const RequestView& view);
  FaultSpec random_fault(const std::string& kind) const;
  std::string new_id(std::string_view prefix, std::size_t length);

  Script script_;
  EngineOptions options_;
  RequestLog* log_;
  Matcher matcher_;  ///< refers to script_, so declared after it
  ConversationRegistry conversations_;
  PromptCache cache_;
  Rng ids_;
  Rng fault_draws_;
};

}  // namespace loopr::mock_llm
