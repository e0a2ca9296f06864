// The texts of the tree marks' states (loop_marks.hpp): what the store and the API carry.
#include <loopr/core/enum_texts.hpp>
#include <loopr/core/loop_marks.hpp>

namespace loopr {

namespace {

constexpr EnumText<GateResult> kGate[] = {{GateResult::none, ""},
                                          {GateResult::checking, "checking"},
                                          {GateResult::passed, "passed"},
                                          {GateResult::failed, "failed"},
                                          {GateResult::forced, "forced"}};
constexpr EnumText<PrChecks> kChecks[] = {{PrChecks::none, ""},
                                          {PrChecks::pending, "pending"},
                                          {PrChecks::passed, "passed"},
                                          {PrChecks::failed, "failed"},
                                          {PrChecks::skipped, "skipped"}};
constexpr EnumText<PullRequestState> kPrStates[] = {{PullRequestState::none, ""},
                                                    {PullRequestState::open, "open"},
                                                    {PullRequestState::closed, "closed"},
                                                    {PullRequestState::merged, "merged"}};

constexpr EnumText<FeedbackSource> kSources[] = {
    {FeedbackSource::validation, "validation"},
    {FeedbackSource::format_check, "format check"},
    {FeedbackSource::protected_files, "protected files"},
    {FeedbackSource::review, "review"},
    {FeedbackSource::user, "user"},
    {FeedbackSource::engine, "engine"},
    {FeedbackSource::integration, "integration"},
    {FeedbackSource::rebase, "rebase"},
    {FeedbackSource::ci, "ci"}};

}  // namespace

const char* to_string(FeedbackSource source) { return text_of(kSources, source, "engine"); }
FeedbackSource parse_feedback_source(std::string_view text) {
  return value_of(kSources, text, FeedbackSource::engine);
}
const char* to_string(GateResult result) { return text_of(kGate, result); }
GateResult parse_gate_result(std::string_view text) {
  return value_of(kGate, text, GateResult::none);
}
const char* to_string(PrChecks checks) { return text_of(kChecks, checks); }
PrChecks parse_pr_checks(std::string_view text) { return value_of(kChecks, text, PrChecks::none); }
const char* to_string(PullRequestState state) { return text_of(kPrStates, state); }
PullRequestState parse_pull_request_state(std::string_view text) {
  return value_of(kPrStates, text, PullRequestState::none);
}

void add_feedback(RunMarks& marks, FeedbackEntry entry, std::size_t max_entries) {
  marks.feedback.push_back(std::move(entry));
  if (marks.feedback.size() > max_entries)
    marks.feedback.erase(
        marks.feedback.begin(),
        marks.feedback.begin() + static_cast<std::ptrdiff_t>(marks.feedback.size() - max_entries));
}

}  // namespace loopr
