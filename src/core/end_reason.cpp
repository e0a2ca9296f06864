#include <loopr/core/end_reason.hpp>

#include <iterator>

#include <loopr/core/loop.hpp>

namespace loopr {
namespace {

struct Spelling {
  EndReason reason;
  const char* word;
};

constexpr Spelling kSpellings[] = {
    {EndReason::none, "none"},
    {EndReason::validation_passed, "validation_passed"},
    {EndReason::completion_signal, "completion_signal"},
    {EndReason::approved, "approved"},
    {EndReason::merged_by_user, "merged_by_user"},
    {EndReason::children_complete, "children_complete"},
    {EndReason::max_iterations, "max_iterations"},
    {EndReason::no_progress, "no_progress"},
    {EndReason::same_failures, "same_failures"},
    {EndReason::cost_limit, "cost_limit"},
    {EndReason::loop_cost_limit, "loop_cost_limit"},
    {EndReason::runtime_limit, "runtime_limit"},
    {EndReason::circuit_breaker, "circuit_breaker"},
    {EndReason::model_error, "model_error"},
    {EndReason::model_refused, "model_refused"},
    {EndReason::internal_error, "internal_error"},
    {EndReason::child_failed, "child_failed"},
    {EndReason::rejected, "rejected"},
    {EndReason::dry_run, "dry_run"},
    {EndReason::stopped_by_user, "stopped_by_user"},
    {EndReason::sibling_failed, "sibling_failed"},
    {EndReason::stop_pattern, "stop_pattern"},
    {EndReason::stop_script, "stop_script"},
    {EndReason::daemon_stopped, "daemon_stopped"},
    {EndReason::daemon_drained, "daemon_drained"},
    {EndReason::invalidated, "invalidated"},
    {EndReason::superseded, "superseded"},
    {EndReason::rebase_conflict, "rebase_conflict"},
    {EndReason::merge_conflict, "merge_conflict"},
    {EndReason::integration_failed, "integration_failed"},
    {EndReason::sandbox_unavailable, "sandbox_unavailable"},
    {EndReason::baseline_failed, "baseline_failed"},
    {EndReason::setup_failed, "setup_failed"},
    {EndReason::held_for_review, "held_for_review"},
    {EndReason::ci_failed, "ci_failed"},
    {EndReason::forge_failed, "forge_failed"},
    {EndReason::paused_by_user, "paused_by_user"},
    {EndReason::attended, "attended"},
    {EndReason::validation_not_run, "validation_not_run"},
    {EndReason::disk_full, "disk_full"},
    {EndReason::run_error, "run_error"},
    {EndReason::review_rejected, "review_rejected"},
    {EndReason::review_error, "review_error"},
    {EndReason::unknown, "unknown"},
};

}  // namespace

const char* to_string(EndReason reason) {
  for (const Spelling& s : kSpellings)
    if (s.reason == reason) return s.word;
  return "unknown";
}

std::optional<EndReason> parse_end_reason(std::string_view text) {
  for (const Spelling& s : kSpellings)
    if (text == s.word) return s.reason;
  return std::nullopt;
}

bool holds_end_reason(LoopStatus status) {
  return is_terminal(status) || status == LoopStatus::blocked || status == LoopStatus::paused;
}

}  // namespace loopr
