#include <algorithm>
#include <array>

#include <loopr/markdown/prompt_template.hpp>

#include "markdown/plain_text.hpp"

namespace loopr::markdown {
namespace {

// clang-format off
constexpr std::array<std::string_view, 20> kVariables = {
    "task", "input", "input-path", "artifact-path", "artifact", "progress",
    "git-status", "git-diff", "git-log", "purpose",
    "loop-id", "parent-id", "plan-id", "loop-type", "iteration", "max-iterations",
    "completion-signal", "validation-command", "max-items", "validation-output"};
// clang-format on

std::string known_list() {
  std::string out;
  for (std::string_view v : kVariables) {
    if (!out.empty()) out += ", ";
    out += v;
  }
  return out;
}

}  // namespace

std::span<const std::string_view> prompt_variable_names() { return kVariables; }

bool is_prompt_variable(std::string_view name) {
  return std::find(kVariables.begin(), kVariables.end(), name) != kVariables.end();
}

Result<PromptTemplate> PromptTemplate::parse(std::string_view text, std::string_view source) {
  PromptTemplate t;
  t.source_ = std::string(source);
  std::vector<std::string> errors;
  auto where = [&](int line) { return std::string(source) + ":" + std::to_string(line) + ": "; };
  std::string literal;
  int line = 1;
  int literal_line = 1;
  auto flush = [&] {
    if (!literal.empty()) t.pieces_.push_back({false, std::move(literal), literal_line});
    literal.clear();
    literal_line = line;
  };
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "\\{{") == 0) {
      literal += "{{";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "{{") == 0) {
      std::size_t close = text.find("}}", i + 2);
      std::size_t newline = text.find('\n', i + 2);
      if (close == std::string_view::npos || newline < close) {
        errors.push_back(where(line) +
                         "`{{` is not closed on its line (write `\\{{` for a literal `{{`)");
        literal += "{{";
        i += 2;
        continue;
      }
      std::string name(trim(text.substr(i + 2, close - i - 2)));
      if (is_prompt_variable(name)) {
        flush();
        t.pieces_.push_back({true, name, line});
        literal_line = line;
      } else {
        errors.push_back(where(line) + "unknown variable `{{" + excerpt(name, 40) +
                         "}}` (known: " + known_list() + "; write `\\{{` for a literal `{{`)");
      }
      i = close + 2;
      continue;
    }
    if (text[i] == '\n') ++line;
    literal += text[i++];
  }
  flush();
  if (!errors.empty()) {
    std::string message;
    for (const std::string& e : errors) message += (message.empty() ? "" : "; ") + e;
    return make_error(ErrorCode::invalid_argument, std::move(message));
  }
  return t;
}

Result<std::string> PromptTemplate::render(const PromptValues& values) const {
  std::string out;
  for (const Piece& piece : pieces_) {
    if (!piece.variable) {
      out += piece.text;
      continue;
    }
    auto it = values.find(piece.text);
    if (it == values.end())
      return make_error(ErrorCode::invalid_argument, source_ + ":" + std::to_string(piece.line) +
                                                         ": no value for `{{" + piece.text + "}}`");
    out += it->second;
  }
  return out;
}

Result<PromptTemplate::Split> PromptTemplate::render_split(
    const PromptValues& values, const std::vector<std::string>& stable) const {
  struct Section {
    std::string text;
    bool fixed = true;
  };
  std::vector<Section> sections(1);
  bool line_start = true;  // of the template's own text
  bool fenced = false;     // inside a ``` block of it (an example artifact's headings)
  for (const Piece& piece : pieces_) {
    if (piece.variable) {
      auto it = values.find(piece.text);
      if (it == values.end())
        return make_error(
            ErrorCode::invalid_argument,
            source_ + ":" + std::to_string(piece.line) + ": no value for `{{" + piece.text + "}}`");
      sections.back().text += it->second;
      if (std::find(stable.begin(), stable.end(), piece.text) == stable.end())
        sections.back().fixed = false;
      line_start = false;
      continue;
    }
    const std::string& t = piece.text;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (line_start && t.compare(i, 3, "```") == 0) fenced = !fenced;
      if (line_start && !fenced && t.compare(i, 3, "## ") == 0 && !sections.back().text.empty())
        sections.emplace_back();
      sections.back().text += t[i];
      line_start = t[i] == '\n';
    }
  }
  Split out;
  for (const Section& s : sections) (s.fixed ? out.fixed : out.rest) += s.text;
  return out;
}

std::vector<std::string> PromptTemplate::variables() const {
  std::vector<std::string> names;
  for (const Piece& piece : pieces_)
    if (piece.variable && std::find(names.begin(), names.end(), piece.text) == names.end())
      names.push_back(piece.text);
  return names;
}

}  // namespace loopr::markdown
