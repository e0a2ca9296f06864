// What the three artifact kinds share: names, problem formatting, and the read_* entry points.
#include <algorithm>

#include <loopr/markdown/artifacts.hpp>

#include "markdown/artifact_parse.hpp"
#include "markdown/file_checks.hpp"

namespace loopr::markdown {

const char* to_string(Rule rule) {
  switch (rule) {
    case Rule::too_large:
      return "too_large";
    case Rule::not_utf8:
      return "not_utf8";
    case Rule::missing_title:
      return "missing_title";
    case Rule::missing_section:
      return "missing_section";
    case Rule::misplaced_section:
      return "misplaced_section";
    case Rule::duplicate_section:
      return "duplicate_section";
    case Rule::empty_section:
      return "empty_section";
    case Rule::no_items:
      return "no_items";
    case Rule::malformed_item:
      return "malformed_item";
    case Rule::bad_name:
      return "bad_name";
    case Rule::missing_description:
      return "missing_description";
    case Rule::duplicate_name:
      return "duplicate_name";
    case Rule::bad_number:
      return "bad_number";
    case Rule::too_many_items:
      return "too_many_items";
  }
  return "unknown";
}

const char* to_string(ArtifactKind kind) {
  switch (kind) {
    case ArtifactKind::plan:
      return "plan";
    case ArtifactKind::spec:
      return "spec";
    case ArtifactKind::phase:
      return "phase";
  }
  return "unknown";
}

std::optional<ArtifactKind> parse_artifact_kind(std::string_view text) {
  for (ArtifactKind k : {ArtifactKind::plan, ArtifactKind::spec, ArtifactKind::phase})
    if (text == to_string(k)) return k;
  return std::nullopt;
}

std::string format_problem(std::string_view file, const Problem& problem) {
  return std::string(file) + ":" + std::to_string(problem.line) + ": " + problem.message;
}

std::string format_problems(std::string_view file, const std::vector<Problem>& problems) {
  std::string out;
  for (const Problem& p : problems) out += format_problem(file, p) + "\n";
  return out;
}

ArtifactParse::ArtifactParse(std::string_view text, const ArtifactsConfig& limits)
    : document(parse_gfm(text)), lines(text), outline(document.get(), lines) {
  check_size(text, limits, problems);
  check_utf8(text, problems);
}

void sort_problems(std::vector<Problem>& problems) {
  std::stable_sort(problems.begin(), problems.end(),
                   [](const Problem& a, const Problem& b) { return a.line < b.line; });
}

std::optional<int> written_item_number(cmark_node* item, const LineIndex& lines) {
  std::string_view line = lines.line(cmark_node_get_start_line(item));
  int column = cmark_node_get_start_column(item);
  if (column < 1 || static_cast<std::size_t>(column) > line.size()) return std::nullopt;
  std::size_t i = static_cast<std::size_t>(column - 1);
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  int number = 0;
  std::size_t digits = 0;
  // CommonMark allows at most 9 digits in a list marker, so this cannot overflow an int.
  while (i < line.size() && line[i] >= '0' && line[i] <= '9' && digits < 9) {
    number = number * 10 + (line[i] - '0');
    ++i;
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return number;
}

std::vector<Problem> validate_artifact(ArtifactKind kind, std::string_view text,
                                       const ArtifactsConfig& limits) {
  switch (kind) {
    case ArtifactKind::plan:
      return check_plan(text, limits).problems;
    case ArtifactKind::spec:
      return check_spec(text, limits).problems;
    case ArtifactKind::phase:
      return check_phase(text, limits).problems;
  }
  return {};
}

namespace {

template <typename Doc>
Result<Doc> to_result(Checked<Doc> checked, std::string_view file) {
  if (checked.valid()) return std::move(checked.doc);
  std::string message = format_problems(file, checked.problems);
  if (!message.empty()) message.pop_back();  // no trailing newline in an error message
  return make_error(ErrorCode::invalid_argument, std::move(message));
}

}  // namespace

Result<PlanDoc> read_plan(std::string_view text, std::string_view file,
                          const ArtifactsConfig& limits) {
  return to_result(check_plan(text, limits), file);
}
Result<SpecDoc> read_spec(std::string_view text, std::string_view file,
                          const ArtifactsConfig& limits) {
  return to_result(check_spec(text, limits), file);
}
Result<PhaseDoc> read_phase(std::string_view text, std::string_view file,
                            const ArtifactsConfig& limits) {
  return to_result(check_phase(text, limits), file);
}

}  // namespace loopr::markdown
