// Fuzzes the artifact parser + validator (all three kinds) on arbitrary bytes, and checks what
// must always hold: no crash, leak or UB (the sanitizers), problems sorted with real line numbers
// and non-empty messages, the same answer twice, and a valid document's items well-formed.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>

#include <loopr/markdown/artifacts.hpp>

using namespace loopr;
using namespace loopr::markdown;

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

// Lines as cmark counts them (\n, \r\n and a lone \r end a line).
int line_count(std::string_view text) {
  int lines = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    if (text[i] == '\n' || text[i] == '\r') ++lines;
  }
  return lines;
}

void check_problems(const std::vector<Problem>& problems, int lines) {
  for (std::size_t i = 0; i < problems.size(); ++i) {
    require(problems[i].line >= 1 && problems[i].line <= lines);
    require(!problems[i].message.empty());
    require(i == 0 || problems[i - 1].line <= problems[i].line);
  }
  (void)format_problems("fuzz.md", problems);
}

bool same(const std::vector<Problem>& a, const std::vector<Problem>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].line != b[i].line || a[i].rule != b[i].rule || a[i].message != b[i].message)
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const int lines = line_count(text);
  ArtifactsConfig limits;
  limits.max_items = 3;  // small, so the item limit is reached by small inputs
  limits.max_bytes = 2048;

  auto plan = check_plan(text, limits);
  check_problems(plan.problems, lines);
  require(same(plan.problems, validate_artifact(ArtifactKind::plan, text, limits)));
  if (plan.valid()) {
    std::set<std::string> names;
    int index = 0;
    for (const SpecItem& s : plan.doc.specs) {
      require(!s.name.empty() && s.name.find_first_not_of(
                                     "abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos);
      require(names.insert(s.name).second);
      require(s.index == ++index && !s.description.empty());
    }
    require(!plan.doc.specs.empty() && plan.doc.specs.size() <= 3);
  }

  auto spec = check_spec(text, limits);
  check_problems(spec.problems, lines);
  if (spec.valid()) {
    int number = 0;
    for (const PhaseItem& p : spec.doc.phases)
      require(p.number == ++number && !p.name.empty() && !p.description.empty());
    require(!spec.doc.phases.empty() && spec.doc.phases.size() <= 3);
  }

  auto phase = check_phase(text, limits);
  check_problems(phase.problems, lines);
  if (phase.valid()) require(!phase.doc.task.text.empty() && phase.doc.task.line > 0);
  return 0;
}
