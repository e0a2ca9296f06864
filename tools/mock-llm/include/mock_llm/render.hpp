// Turns a resolved reply (blocks with ids and signatures, stop reason, usage) into what the
// services send: Anthropic message JSON or its SSE events, OpenAI chat completion JSON or its
// `data:` chunks. Pure functions, so every byte on the wire is unit-testable.
#pragma once

#include <cstdint>
#include <mock_llm/script.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace loopr::mock_llm {

struct Usage {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cache_read_input_tokens = 0;
  std::int64_t cache_creation_input_tokens = 0;
};

struct Block {
  BlockKind kind = BlockKind::text;
  std::string text;       ///< thinking text, text, or redacted data
  std::string signature;  ///< thinking
  std::string id;         ///< tool_use
  std::string name;       ///< tool_use
  Json input;             ///< tool_use input; for `raw`, the whole block
};

struct Reply {
  std::string id;  ///< msg_… or chatcmpl-…
  std::string model;
  std::vector<Block> blocks;
  std::string stop_reason;  ///< Anthropic terms; mapped for OpenAI
  Json stop_details;        ///< null or the object sent
  std::string stop_sequence;
  Usage usage;
};

/// Compact JSON text; invalid UTF-8 (only possible from raw bytes) is replaced, never thrown.
std::string to_wire(const Json& value);

/// `event: <name>\ndata: <json>\n\n`.
std::string sse_event(std::string_view name, const Json& data);

Json anthropic_block_json(const Block& block);
Json anthropic_content_json(const Reply& reply);
Json anthropic_message_json(const Reply& reply);
/// The whole stream; text, thinking and tool input arrive in several deltas cut by `seed`.
std::vector<std::string> anthropic_sse(const Reply& reply, std::uint64_t seed);
/// An `error` event as sent after HTTP 200.
std::string anthropic_error_event(const std::string& error_type, const std::string& message,
                                  const std::string& request_id);

/// end_turn → stop, tool_use → tool_calls, max_tokens → length, refusal → content_filter, …
std::string openai_finish_reason(const std::string& stop_reason);
Json openai_usage_json(const Usage& usage);
Json openai_completion_json(const Reply& reply, std::int64_t created);
/// `data:` chunks up to and including `data: [DONE]`.
std::vector<std::string> openai_sse(const Reply& reply, bool include_usage, std::int64_t created,
                                    std::uint64_t seed);

/// The Responses API (render_responses.cpp): usage with input_tokens_details.cached_tokens; the
/// `response` object (`finished`: completed/incomplete with output and usage, else in_progress
/// and empty); its whole event stream; an `error` event.
Json responses_usage_json(const Usage& usage);
Json responses_json(const Reply& reply, std::int64_t created, bool finished);
std::vector<std::string> responses_sse(const Reply& reply, std::int64_t created,
                                       std::uint64_t seed);
std::string responses_error_event(const std::string& code, const std::string& message,
                                  std::int64_t sequence_number);

/// The Gemini API (gemini_api.cpp): a GenerateContentResponse; the `data:` chunks of
/// streamGenerateContent?alt=sse; its error JSON (RetryInfo when `retry_after` is given).
Json gemini_response_json(const Reply& reply);
std::vector<std::string> gemini_sse(const Reply& reply, std::uint64_t seed);
std::string gemini_status(int status);

}  // namespace loopr::mock_llm
