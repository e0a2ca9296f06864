// The iteration outcome's text (iteration_outcome.hpp).
#include <loopr/core/enum_texts.hpp>
#include <loopr/core/iteration_outcome.hpp>

namespace loopr {

namespace {

constexpr EnumText<IterationOutcome> kTexts[] = {
    {IterationOutcome::passed, "passed"}, {IterationOutcome::failed, "failed"},
    {IterationOutcome::asked, "asked"},   {IterationOutcome::stopped, "stopped"},
    {IterationOutcome::error, "error"},   {IterationOutcome::other, "other"}};

}  // namespace

const char* to_string(IterationOutcome outcome) { return text_of(kTexts, outcome, "other"); }

IterationOutcome parse_iteration_outcome(std::string_view text) {
  return value_of(kTexts, text, IterationOutcome::other);
}

}  // namespace loopr
