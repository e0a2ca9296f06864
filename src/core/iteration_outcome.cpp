// The iteration outcome's text (iteration_outcome.hpp).
#include <loopr/core/iteration_outcome.hpp>

namespace loopr {

namespace {

constexpr struct {
  IterationOutcome outcome;
  const char* text;
} kTexts[] = {{IterationOutcome::passed, "passed"}, {IterationOutcome::failed, "failed"},
              {IterationOutcome::asked, "asked"},   {IterationOutcome::stopped, "stopped"},
              {IterationOutcome::error, "error"},   {IterationOutcome::other, "other"}};

}  // namespace

const char* to_string(IterationOutcome outcome) {
  for (const auto& t : kTexts)
    if (t.outcome == outcome) return t.text;
  return "other";
}

IterationOutcome parse_iteration_outcome(std::string_view text) {
  for (const auto& t : kTexts)
    if (t.outcome != IterationOutcome::other && text == t.text) return t.outcome;
  return IterationOutcome::other;
}

}  // namespace loopr
