// What differs between the two HTTP providers (Anthropic Messages, OpenAI chat completions):
// the request they want, how a response and a stream read, and the error body. The HTTP
// plumbing around it is shared (http_llm_client.cpp). Pure code: no Asio, unit-testable.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <loopr/core/sse.hpp>
#include <loopr/llm/types.hpp>

#include "llm/http_client.hpp"

namespace loopr::llm {

using loopr::SseEvent;  // the one SSE parser lives in core (the daemon's client reads SSE too)
using loopr::SseParser;

/// The client's settings the wire needs, resolved from LlmConfig + environment.
struct WireSettings {
  std::string model;
  int max_tokens = 16000;
  std::string api_key;  ///< empty: no auth header is sent
  std::string key_env;  ///< ANTHROPIC_API_KEY / OPENAI_API_KEY, for messages
  bool bearer = true;   ///< Anthropic: Authorization: Bearer (else x-api-key)
  std::string api_version = "2026-10-21";
  std::string max_tokens_field = "max_completion_tokens";  ///< OpenAI
  /// llm.cache: Anthropic cache breakpoints (llm/prompt_cache.hpp), OpenAI prompt_cache_key.
  bool cache = true;
  bool cache_ttl_1h = false;  ///< llm.cache_ttl: 1h
};

/// Builds a response out of a provider's stream, one SSE event at a time.
class StreamAssembler {
 public:
  virtual ~StreamAssembler() = default;
  /// Feeds one event; an error (an `error` event, malformed data) ends the stream.
  virtual std::optional<LlmError> on_event(const SseEvent& event) = 0;
  /// True once the end marker (`message_stop`, `data: [DONE]`) was seen.
  virtual bool complete() const = 0;
  /// The assembled response; call only when complete().
  virtual Response take_response() = 0;
};

class Wire {
 public:
  virtual ~Wire() = default;
  virtual const std::string& provider() const = 0;
  /// The HTTP request for `request`, or an error for a request loopr must not send.
  virtual std::variant<HttpRequest, LlmError> build(const Request& request, bool stream) const = 0;
  /// A complete non-streamed 200 body.
  virtual std::variant<Response, LlmError> parse_response(std::string_view body) const = 0;
  virtual std::unique_ptr<StreamAssembler> start_stream() const = 0;
  /// The name of the response header that carries the request id.
  virtual std::string_view request_id_header() const = 0;
  /// What ends a complete stream (`message_stop`, `[DONE]`), for messages.
  virtual std::string_view stream_end_marker() const = 0;
  const WireSettings& settings() const { return settings_; }

 protected:
  explicit Wire(WireSettings settings) : settings_(std::move(settings)) {}
  WireSettings settings_;
};

std::unique_ptr<Wire> make_anthropic_wire(WireSettings settings);
/// A Messages API content block read by its type, `raw` keeping it as received.
ContentBlock anthropic_block_from_json(const nlohmann::json& block);
std::unique_ptr<Wire> make_openai_wire(WireSettings settings);
/// The OpenAI Responses API (`/v1/responses`), `llm.provider: openai-responses`.
std::unique_ptr<Wire> make_responses_wire(WireSettings settings);

/// The error for a non-2xx response (either provider's error body shape), classified per
/// WIRE.md: retryable or fatal, the server's wait, and a message naming what to do.
LlmError classify_http_error(const HttpHead& head, std::string_view body,
                             const std::string& provider, const WireSettings& settings,
                             std::string_view request_id_header);

/// The error for a transport failure (timeouts, refused connections, cut streams, TLS).
LlmError classify_transport_failure(const HttpFailure& failure, const std::string& provider);

/// A retryable protocol error: the server sent something that is not what the protocol says.
LlmError protocol_error(const std::string& provider, const std::string& what);

/// Shared by the wires: a POST of `body` to `target` with the JSON content type, the
/// `x-loopr-*` headers, `accept` for a stream or not, and `auth` (a header name and value) when
/// there is a key (local servers started without one accept any request).
HttpRequest json_request(std::string target, const Request& request, bool stream,
                         const nlohmann::json& body,
                         std::vector<std::pair<std::string, std::string>> extra_headers = {});
/// `authorization: Bearer <key>`, or nothing without a key.
std::vector<std::pair<std::string, std::string>> bearer(const std::string& key);

/// The refusal of a conversation that does not end with the user's turn (a bug in loopr; the
/// API would answer 400), or nothing.
std::optional<LlmError> refuse_unless_user_last(const Request& request);

/// A complete body as a JSON object, or the protocol error that names what came instead.
std::variant<nlohmann::json, LlmError> json_object_body(const std::string& provider,
                                                        std::string_view body);

}  // namespace loopr::llm
