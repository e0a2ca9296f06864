// Reading `claude -p … --output-format stream-json --verbose` (WIRE.md §3): one JSON object per
// line — system/init, assistant and user turns, system/api_retry, the final `result` — and what
// the run comes to once the process has ended. Pure code, tested on the recorded fixture.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/process.hpp>
#include <loopr/llm/pricing.hpp>
#include <loopr/llm/types.hpp>

namespace loopr::llm {

class StreamJsonReader {
 public:
  /// One line of stdout; blank and non-JSON lines are skipped, unknown types ignored.
  void on_line(std::string_view line);

  /// The outcome of the run: the `result` line read as a Response, or an LlmError when the
  /// result says `is_error` (even with subtype `success`), when there is no result (EOF without
  /// it), or when the process timed out, was cancelled or could not start. The cost is the
  /// CLI's `total_cost_usd` (it includes subagents); `pricing` is used only when that is absent.
  Outcome finish(const ProcessResult& process, const Pricing& pricing) const;

  const std::string& session_id() const { return session_id_; }
  int api_retries() const { return api_retries_; }

 private:
  void add_turn(Role role, const nlohmann::json& message);

  std::string model_;
  std::string session_id_;
  std::vector<Message> transcript_;
  std::string last_assistant_id_;  ///< one assistant line per block: lines with one id merge
  std::string assistant_error_;    ///< `assistant.error`, e.g. rate_limit, authentication_failed
  int api_retries_ = 0;
  std::optional<nlohmann::json> result_;
};

}  // namespace loopr::llm
