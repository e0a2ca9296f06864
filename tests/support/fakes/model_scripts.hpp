// Model scripts (mock-llm's YAML, tools/mock-llm/README.md) that many engine tests share: the
// code loop that does nothing, the one whose model is too slow to answer, models whose calls
// fail (always, or once and then answer), and the code loop whose first turn makes some tool
// calls and whose next turn ends the iteration. A test whose model does something of its own
// writes its script in full, where it is read.
#pragma once

#include <string>

namespace loopr::testing {

/// A model that answers every code turn with text and does nothing.
inline constexpr const char* kIdleModel = R"(
defaults:
  usage: {input_tokens: 1000, output_tokens: 100}
rules:
  - name: idle
    match: {loop_type: code}
    reply: {text: "I looked around."}
)";

/// A model whose every code turn answers only after 30 s: a call that a stop or an iteration's
/// time limit cuts.
inline constexpr const char* kSlowModel = R"(
rules:
  - name: slow
    match: {loop_type: code}
    reply:
      text: "too late"
      fault: {delay: 30s}
)";

/// A model whose every code call fails with the mock-llm fault `fault` (a YAML flow map such as
/// `{status: 529}`).
inline std::string failing_model(const std::string& fault) {
  return "rules:\n"
         "  - name: fault\n    match: {loop_type: code}\n    reply: {fault: " +
         fault + "}\n";
}

/// A model whose first code call fails with `fault` and whose later ones answer "done".
inline std::string fails_once_model(const std::string& fault) {
  return "rules:\n"
         "  - name: fault\n    match: {loop_type: code}\n    times: 1\n    reply: {fault: " +
         fault +
         "}\n"
         "  - name: ok\n    match: {loop_type: code}\n    reply: {text: \"done\"}\n";
}

/// Every iteration of a code loop: its first turn makes the tool calls `calls` (a YAML flow
/// list, `{{n}}` is the iteration), its next turn answers `end` and so ends the iteration.
inline std::string code_turns(const std::string& calls, const std::string& end = "done") {
  return "rules:\n"
         "  - name: work\n    match: {loop_type: code, turn: 1}\n"
         "    reply:\n      tool_use: " +
         calls +
         "\n"
         "  - name: end\n    match: {loop_type: code}\n    reply: {text: \"" +
         end + "\"}\n";
}

/// The same, with the first iteration's calls `first` and every later one's `then`.
inline std::string two_step_script(const std::string& first, const std::string& then) {
  return "rules:\n"
         "  - name: first\n    match: {loop_type: code, turn: 1}\n    times: 1\n"
         "    reply:\n      tool_use: " +
         first +
         "\n"
         "  - name: then\n    match: {loop_type: code, turn: 1}\n"
         "    reply:\n      tool_use: " +
         then +
         "\n"
         "  - name: end\n    match: {loop_type: code}\n    reply: {text: \"done\"}\n";
}

}  // namespace loopr::testing
