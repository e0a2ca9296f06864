// The mock-llm script: ordered rules that say which scripted reply (thinking, text, tool_use
// blocks, stop reason, usage, faults) answers which request. Loaded from YAML and checked up
// front, so a typo in a test's script fails at start-up, not as a puzzling unmatched request.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/result.hpp>

namespace re2 {
class RE2;
}

namespace loopr::mock_llm {

using Json = nlohmann::json;
using Millis = std::chrono::milliseconds;

enum class Api { anthropic, openai, responses, gemini };
const char* to_string(Api api);

/// Token counts; unset fields fall back to the script's defaults, then to 0.
struct UsageSpec {
  std::optional<std::int64_t> input_tokens;
  std::optional<std::int64_t> output_tokens;
  std::optional<std::int64_t> cache_read_input_tokens;
  std::optional<std::int64_t> cache_creation_input_tokens;
};

/// A deterministic fault for one reply (or the shape of a randomly injected one).
struct FaultSpec {
  std::optional<int> status;  ///< answer with this HTTP status and the real error JSON
  std::string error_type;     ///< overrides the type derived from the status
  std::string error_code;     ///< error.details.error_code (Anthropic) / error.code (OpenAI)
  std::string message;
  std::optional<std::string> retry_after;  ///< `retry-after` header value (seconds or a date)
  std::optional<std::int64_t> retry_after_ms;
  std::optional<bool> should_retry;               ///< `x-should-retry`
  Millis delay{0};                                ///< before the response headers
  std::optional<std::size_t> cut_after_events;    ///< stream: close after N events
  std::optional<std::size_t> stall_after_events;  ///< stream: go silent after N events
  std::string error_event;  ///< stream: HTTP 200, then an `error` event of this type
  bool malformed_json = false;
  bool hang = false;  ///< read the request, never answer

  /// What the log's `fault` field says: "429", "cut_stream", "error_event", … or "delay".
  std::string kind() const;
};

enum class BlockKind { thinking, redacted_thinking, text, tool_use, raw };

/// One content block of a reply; strings may hold `{{…}}` template variables.
struct BlockSpec {
  BlockKind kind = BlockKind::text;
  std::string text;  ///< thinking text, text, or redacted_thinking data
  std::string name;  ///< tool name
  Json input;        ///< tool input (object), or the whole block for `raw`
  std::string id;    ///< tool_use id; empty: generated
};

struct ReplySpec {
  std::vector<BlockSpec> blocks;
  std::string stop_reason;  ///< empty: tool_use when a tool_use block is present, else end_turn
  Json stop_details;        ///< null: the default for the stop reason
  std::string stop_sequence;
  UsageSpec usage;
  std::string model;  ///< empty: defaults.model, else the request's model
  std::optional<FaultSpec> fault;
  Millis event_delay{-1};  ///< between streamed events; negative: the default
};

/// The request fields a rule can match with a regular expression.
enum class Field { loop_type, loop_id, system, user, first_user, tool_result, model };
const char* to_string(Field field);
inline constexpr Field kAllFields[] = {Field::loop_type, Field::loop_id,    Field::system,
                                       Field::user,      Field::first_user, Field::tool_result,
                                       Field::model};

struct Pattern {
  Field field;
  std::shared_ptr<const re2::RE2> regex;  ///< shared: RE2 cannot be copied
};

struct MatchSpec {
  std::optional<Api> api;
  std::vector<Pattern> patterns;
  std::optional<int> turn;
};

struct Rule {
  std::string name;
  MatchSpec match;
  std::optional<std::int64_t> times;  ///< fire at most N times; none: unlimited
  bool per_loop = false;              ///< count `times` and replies per x-loopr-loop-id
  bool random_faults = true;          ///< false: never inject random faults into this rule
  std::vector<ReplySpec> replies;     ///< used in order; the last one repeats
};

/// Random faults over all matched requests (the fault suite's 20 % rate).
struct RandomFaults {
  double rate = 0;
  std::uint64_t seed = 0;
  std::vector<std::string> kinds;  ///< HTTP statuses or cut_stream, malformed_json, error_event, …
  std::string retry_after = "1";   ///< for injected 429s
};

struct Defaults {
  std::string model;  ///< empty: echo the request's model
  UsageSpec usage;
  bool thinking = false;  ///< start every reply with a thinking block
  Millis latency{0};      ///< before every answer (the `--latency` flag overrides it)
  Millis event_delay{0};  ///< between streamed events
  /// Emulate Anthropic prompt caching (mock_llm/prompt_cache.hpp): the input fields of every
  /// Anthropic answer's usage come from the request and the cache, not from `usage`.
  bool prompt_cache = false;
  std::int64_t cache_min_tokens = 1024;  ///< the shortest prefix a breakpoint caches
};

struct Script {
  Defaults defaults;
  RandomFaults faults;
  std::vector<Rule> rules;
};

/// Fault kinds that `faults.kinds` accepts besides HTTP status codes.
bool is_named_fault_kind(std::string_view kind);

/// Parses a script; errors name the source, the line and the key.
Result<Script> parse_script(const std::string& yaml_text, const std::string& source_name);
Result<Script> load_script_file(const std::string& path);

}  // namespace loopr::mock_llm
