// Remembers the assistant turns mock-llm sent, so a later request can be checked the way the
// real service checks it: thinking/redacted_thinking blocks come back unchanged and in order,
// in the conversation they were made for, and a `pause_turn` answer may be resent as the last
// (assistant) message. In memory only: a restarted mock-llm knows no earlier turns.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace loopr::mock_llm {

class ConversationRegistry {
 public:
  /// Records an Anthropic answer (`content` blocks, stop reason) to the request `body`.
  void record(const nlohmann::json& body, const nlohmann::json& content,
              const std::string& stop_reason);

  /// Checks the assistant messages of an Anthropic request body; an error message in the
  /// service's words if a thinking block was altered, dropped, reordered, unknown, or is
  /// echoed in a different conversation.
  std::optional<std::string> check(const nlohmann::json& body) const;

  /// True if `content` is, verbatim, an answer that stopped with `pause_turn`.
  bool is_paused_turn(const nlohmann::json& content) const;

 private:
  struct Thinking {
    std::size_t response = 0;  ///< index into responses_
    std::size_t position = 0;  ///< among that response's thinking blocks
    nlohmann::json block;      ///< type + thinking + signature, or type + data
  };
  struct Response {
    std::size_t thinking_count = 0;
    std::uint64_t conversation = 0;  ///< hash of system, tools and the messages before it
  };

  std::vector<Response> responses_;
  std::unordered_map<std::string, Thinking> thinking_;  ///< by signature (or redacted data)
  std::unordered_map<std::string, std::size_t> tool_ids_;
  std::unordered_set<std::uint64_t> paused_;  ///< hashes of pause_turn contents
};

/// Hash of system, tools and messages[0, count): what a thinking block is bound to.
std::uint64_t conversation_hash(const nlohmann::json& body, std::size_t count);

}  // namespace loopr::mock_llm
