#include <re2/re2.h>

#include <algorithm>
#include <mock_llm/matcher.hpp>

namespace loopr::mock_llm {
namespace {

/// Searches `text` with the pattern; on a match adds `field.0`, `field.1`, … and named groups.
bool match_pattern(const Pattern& p, const std::string& text, TemplateVars& vars) {
  const int groups = p.regex->NumberOfCapturingGroups();
  std::vector<re2::StringPiece> sub(static_cast<std::size_t>(groups) + 1);
  if (!p.regex->Match(text, 0, text.size(), RE2::UNANCHORED, sub.data(), groups + 1)) return false;
  const std::string prefix = std::string(to_string(p.field)) + ".";
  for (int g = 0; g <= groups; ++g) {
    const auto& piece = sub[static_cast<std::size_t>(g)];
    vars[prefix + std::to_string(g)] = piece.data() ? std::string(piece.data(), piece.size()) : "";
  }
  for (const auto& [name, index] : p.regex->NamedCapturingGroups())
    vars[prefix + name] = vars[prefix + std::to_string(index)];
  return true;
}

}  // namespace

Matcher::Matcher(const Script& script) : script_(script), fired_(script.rules.size(), 0) {}

std::int64_t Matcher::loop_count(std::size_t rule, const std::string& loop_id) const {
  auto it = fired_per_loop_.find({rule, loop_id});
  return it == fired_per_loop_.end() ? 0 : it->second;
}

std::optional<MatchOutcome> Matcher::find(const RequestView& view) const {
  for (std::size_t i = 0; i < script_.rules.size(); ++i) {
    const Rule& rule = script_.rules[i];
    const MatchSpec& m = rule.match;
    if (m.api && *m.api != view.api) continue;
    if (m.turn && *m.turn != view.turn) continue;
    const std::int64_t per_loop = loop_count(i, view.loop_id);
    const std::int64_t counted = rule.per_loop ? per_loop : fired_[i];
    if (rule.times && counted >= *rule.times) continue;  // used up: fall through
    TemplateVars vars;
    bool all = std::all_of(m.patterns.begin(), m.patterns.end(), [&](const Pattern& p) {
      return match_pattern(p, view.field(p.field), vars);
    });
    if (!all) continue;
    MatchOutcome out;
    out.rule_index = i;
    out.reply_index = static_cast<std::size_t>(
        std::min<std::int64_t>(counted, static_cast<std::int64_t>(rule.replies.size()) - 1));
    out.n = per_loop + 1;
    vars["loop_id"] = view.loop_id;
    vars["loop_type"] = view.loop_type;
    vars["n"] = std::to_string(out.n);
    vars["turn"] = std::to_string(view.turn);
    vars["model"] = view.model;
    vars["api"] = to_string(view.api);
    out.vars = std::move(vars);
    return out;
  }
  return std::nullopt;
}

void Matcher::consume(const MatchOutcome& outcome, const RequestView& view) {
  ++fired_[outcome.rule_index];
  ++fired_per_loop_[{outcome.rule_index, view.loop_id}];
}

}  // namespace loopr::mock_llm
