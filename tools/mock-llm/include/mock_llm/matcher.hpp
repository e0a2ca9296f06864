// Picks the rule that answers a request: the first rule whose every given field matches and
// that is not used up; keeps the per-rule and per-loop counters that `times`, `replies` and
// `{{n}}` depend on.
#pragma once

#include <cstdint>
#include <map>
#include <mock_llm/request_view.hpp>
#include <mock_llm/script.hpp>
#include <mock_llm/template.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loopr::mock_llm {

struct MatchOutcome {
  std::size_t rule_index = 0;
  std::size_t reply_index = 0;  ///< which of the rule's replies answers
  std::int64_t n = 1;           ///< times the rule fired for this loop, this one included
  TemplateVars vars;            ///< captures and request facts for `{{…}}`
};

class Matcher {
 public:
  /// `script` must outlive the matcher.
  explicit Matcher(const Script& script);

  /// The first rule that matches and is not used up. Does not count it: a randomly injected
  /// fault answers instead of the reply without consuming the rule.
  std::optional<MatchOutcome> find(const RequestView& view) const;

  /// Counts one firing of the outcome's rule (its reply was given).
  void consume(const MatchOutcome& outcome, const RequestView& view);

 private:
  std::int64_t loop_count(std::size_t rule, const std::string& loop_id) const;

  const Script& script_;
  std::vector<std::int64_t> fired_;  ///< per rule
  std::map<std::pair<std::size_t, std::string>, std::int64_t> fired_per_loop_;
};

}  // namespace loopr::mock_llm
