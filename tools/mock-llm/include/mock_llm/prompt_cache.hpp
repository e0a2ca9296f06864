// Anthropic prompt caching as the service documents it, so tests and the bench see real hit
// rates: the prompt is read in the order tools → system → messages, block by block; a block with
// `cache_control` is a breakpoint; a request reads the longest prefix cached earlier (exactly
// equal up to a breakpoint of its own, or up to one of the 20 blocks before it), and writes the
// prefix up to each of its breakpoints that is at least the minimum length. Entries live for
// their TTL (5m, or 1h) from their last write or hit. More than 4 breakpoints, or one on an
// empty text block or a thinking block, is a 400. Caches are per API key and model: no request
// reads what another key wrote.
#pragma once

#include <chrono>
#include <cstdint>
#include <mock_llm/errors.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

namespace loopr::mock_llm {

/// What a request's input came to: uncached input, cache writes, cache reads (tokens).
struct CacheUsage {
  std::int64_t input_tokens = 0;
  std::int64_t cache_creation_input_tokens = 0;
  std::int64_t cache_read_input_tokens = 0;
};

/// The service's 400s for breakpoints: more than 4, on an empty text block, on thinking.
std::optional<ApiError> check_cache_breakpoints(const nlohmann::json& body);

class PromptCache {
 public:
  using Clock = std::chrono::steady_clock;
  /// `min_tokens`: the shortest prefix a breakpoint caches (1024 for Opus and Sonnet).
  explicit PromptCache(std::int64_t min_tokens = 1024) : min_tokens_(min_tokens) {}

  /// Accounts a request body (already validated) for `scope` (the API key): reads, then writes.
  CacheUsage account(const nlohmann::json& body, const std::string& scope,
                     Clock::time_point now = Clock::now());

  /// About four bytes of JSON per token, like the service's tokenizer on English text.
  static std::int64_t tokens(const nlohmann::json& block);

 private:
  struct Entry {
    Clock::time_point expires;
    std::chrono::seconds ttl;
  };
  std::int64_t min_tokens_;
  std::unordered_map<std::uint64_t, Entry> entries_;  ///< by prefix hash
};

}  // namespace loopr::mock_llm
