// What loopr sends to a model and what comes back, independent of the provider: one request
// (system text, the current iteration's turns, tools) and either a response or a classified error.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <loopr/core/loop.hpp>
#include <loopr/core/result.hpp>

namespace loopr::llm {

/// One block of a message. Blocks read from a response keep `raw`, the block exactly as the
/// provider sent it; a block with `raw` is sent back verbatim, so thinking signatures, `caller`
/// fields and block types loopr does not know survive the round trip (WIRE.md §1).
struct ContentBlock {
  enum class Type {
    text,
    tool_use,
    tool_result,
    thinking,           ///< `thinking` (text in `text`) — echoed from `raw`, never rebuilt
    redacted_thinking,  ///< opaque; echoed from `raw`
    other,              ///< a block type loopr does not know; echoed from `raw`
  };

  Type type = Type::text;
  std::string text;       ///< text; thinking text; tool_result content
  std::string id;         ///< tool_use: its id; tool_result: the tool_use id it answers
  std::string name;       ///< tool_use: the tool's name
  nlohmann::json input;   ///< tool_use: the arguments (an object)
  bool is_error = false;  ///< tool_result: the tool failed
  nlohmann::json raw;     ///< as received (provider-specific); null for blocks loopr made

  static ContentBlock make_text(std::string text);
  static ContentBlock make_tool_use(std::string id, std::string name, nlohmann::json input);
  static ContentBlock make_tool_result(std::string tool_use_id, std::string content,
                                       bool is_error = false);
};

enum class Role { user, assistant };

struct Message {
  Role role = Role::user;
  std::vector<ContentBlock> content;

  static Message user_text(std::string text);
};

/// A tool the model may call; `input_schema` is a JSON schema sent verbatim.
struct ToolDefinition {
  std::string name;
  std::string description;
  nlohmann::json input_schema;
};

struct Request {
  std::string model;              ///< empty: the client's configured model
  std::string system;             ///< empty: none
  std::vector<Message> messages;  ///< first user message, then this iteration's turns
  std::vector<ToolDefinition> tools;
  std::optional<int> max_tokens;  ///< none: the client's configured max_tokens
  std::string loop_id;            ///< sent as `x-loopr-loop-id`
  std::string loop_type;          ///< plan|spec|phase|code|judge, sent as `x-loopr-loop-type`
  /// The provider to answer (Config::provider_for the loop's role); empty: the client's own.
  std::string provider;
  std::string working_dir;        ///< claude-code: the CLI runs (and edits files) here
  /// claude-code: the whole CLI run is killed (process group) after this; 0 = client default.
  /// HTTP providers use their connect / first-byte / idle timeouts instead.
  std::chrono::milliseconds timeout{0};
  /// claude-code: set to true (from any thread) to kill the running CLI. HTTP calls are short
  /// enough to end by their own timeouts and do not look at it.
  const std::atomic<bool>* cancel = nullptr;
  /// Agent CLIs: applies a call of one of loopr's own tools in `tools` (share_note, ask_user)
  /// that the CLI's model made through `loopr mcp-serve` (llm/mcp.hpp) to this loop: returns
  /// the text for the model and whether it is an error. Called on another thread, blocking,
  /// only while complete() runs. Empty: the CLI gets none of loopr's tools.
  std::function<std::pair<std::string, bool>(const std::string& name, const nlohmann::json& input)>
      own_tool;
};

/// Why the model stopped (WIRE.md §1 `stop_reason`; OpenAI `finish_reason` is mapped onto it).
enum class StopReason {
  end_turn,
  tool_use,
  max_tokens,
  stop_sequence,
  pause_turn,                     ///< resend the conversation as it is to let the model go on
  refusal,                        ///< see Response::stop_details; surface to the user
  model_context_window_exceeded,  ///< trim the context; retrying as-is cannot help
  unknown,                        ///< a value loopr does not know (see stop_reason_text)
};
const char* to_string(StopReason reason);
StopReason parse_stop_reason(std::string_view text);

struct Response {
  std::vector<ContentBlock> content;  ///< in the order received
  StopReason stop_reason = StopReason::unknown;
  std::string stop_reason_text;  ///< as received, for logs
  std::string stop_sequence;     ///< which stop sequence matched (stop_sequence only)
  nlohmann::json stop_details;   ///< refusal: {type, category, explanation}; else null
  /// Tokens and `cost_usd`. `input_tokens` excludes cached input (cache reads and writes are
  /// counted apart), for every provider, so pricing treats them alike.
  Usage usage;
  /// An agent CLI on a subscription login (not a key): the cost it reported, which nobody is
  /// billed per token; `usage.cost_usd` holds it only under `limits.count_subscription_cost`.
  std::optional<double> notional_cost_usd;
  std::string model;       ///< the model that answered
  std::string id;          ///< the provider's message id (claude-code: the session id)
  std::string request_id;  ///< `request-id` / `x-request-id` header, for support and logs
  int num_turns = 1;       ///< claude-code: turns the CLI ran; 1 for a single API call
  /// claude-code only: what the CLI did (assistant turns with tool_use, tool results), for the
  /// iteration log; the engine does not act on it.
  std::vector<Message> transcript;

  /// All text blocks joined (thinking excluded).
  std::string text() const;
  /// The tool_use blocks, in order.
  std::vector<const ContentBlock*> tool_uses() const;
  /// The assistant turn to append to the conversation: every block, unchanged.
  Message to_message() const;
};

/// What kind of failure; the scheduler branches on this (e.g. rate_limited pauses a provider).
enum class ErrorKind {
  rate_limited,     ///< 429
  overloaded,       ///< 529 / overloaded_error
  server,           ///< 5xx, 408, 409, an `error` event after 200
  timeout,          ///< connect, first byte or idle timeout
  network,          ///< connection refused or lost, stream cut before its end marker
  protocol,         ///< malformed JSON / SSE from the server
  auth,             ///< 401: key missing or refused
  billing,          ///< 402
  permission,       ///< 403
  not_found,        ///< 404 (model or endpoint)
  invalid_request,  ///< 400/413/422, or a request loopr refuses to send
  spend_limit,      ///< 429 `enforced_spend_limit_reached`: stop, do not retry
  tls,              ///< certificate refused; retrying cannot help
  process,          ///< claude-code: the CLI failed, reported an error or gave no result
  cancelled,
};
const char* to_string(ErrorKind kind);

struct LlmError {
  ErrorKind kind = ErrorKind::server;
  bool retryable = false;
  /// The wait the server asked for (`retry-after-ms` / `retry-after`), if any.
  std::optional<std::chrono::milliseconds> retry_after;
  int http_status = 0;     ///< 0 when no HTTP status was received
  std::string type;        ///< the provider's error type, e.g. `rate_limit_error`
  std::string error_code;  ///< `error.details.error_code` when given
  std::string message;     ///< for a person: what failed and what to do
  std::string request_id;

  /// The message with the request id appended, for logs and the user.
  std::string describe() const;
  /// As a core Error (timeout / cancelled / invalid_argument / io).
  Error to_error() const;
};

/// A response or an error; `complete` never throws for what the provider or network does.
class Outcome {
 public:
  Outcome(Response response) : v_(std::move(response)) {}  // NOLINT(google-explicit-constructor)
  Outcome(LlmError error) : v_(std::move(error)) {}        // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  Response& response() & { return std::get<0>(v_); }
  const Response& response() const& { return std::get<0>(v_); }
  Response&& response() && { return std::get<0>(std::move(v_)); }
  const LlmError& error() const { return std::get<1>(v_); }
  LlmError& error() { return std::get<1>(v_); }

 private:
  std::variant<Response, LlmError> v_;
};

}  // namespace loopr::llm
