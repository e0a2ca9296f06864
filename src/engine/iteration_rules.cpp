#include "engine/iteration_rules.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <cstdio>
#include <functional>

#include <loopr/core/commit_message.hpp>
#include <loopr/core/disk.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/engine/test_output.hpp>

namespace loopr::engine {
namespace {

std::optional<std::string> match_stop_pattern(const Config& config, const std::string& output) {
  for (const auto& pattern : config.limits.stop_on_patterns) {
    re2::RE2 re(pattern, re2::RE2::Quiet);
    if (re.ok() && re2::RE2::PartialMatch(output, re))
      return "the validation output matched the stop pattern `" + pattern +
             "` (limits.stop_on_patterns)";
  }
  return std::nullopt;
}

std::string resume_hint(const Loop& loop) { return "`loopr resume " + loop.id + "`"; }

// The feedback a failed iteration leaves for the next prompt.
FeedbackEntry failure_feedback(const Loop& loop, int n, const IterationFacts& f,
                               const Config& config) {
  const Validation& v = *f.validation;
  FeedbackEntry fb{
      n, loop.type == LoopType::code ? FeedbackSource::validation : FeedbackSource::format_check,
      v.summary, v.feedback};
  if (!f.breaches.empty()) fb.source = FeedbackSource::protected_files;
  if (f.review && f.review->verdict == ReviewResult::Verdict::fail)
    fb = {n, FeedbackSource::review, f.review->summary,
          "A reviewer read your change (the tests passed) and sent it back:\n\n" +
              f.review->feedback};
  if (!v.has_check) {
    fb.summary = "no completion signal";
    fb.text = "There is no validation command for this loop, so it ends only when you write " +
              config.limits.completion_signal + " after finishing the task.";
  }
  if (f.end == Conversation::End::context_exceeded)
    fb.text +=
        "\n\nThe conversation filled the model's context window. Do less per iteration and read "
        "only what you need.";
  if (f.end == Conversation::End::max_turns)
    fb.text += "\n\nThe iteration ended after " + std::to_string(f.turns) +
               " model turns (max_turns_per_iteration). Work in smaller steps.";
  if (f.end == Conversation::End::max_runtime)
    fb.text += "\n\nThe " + runtime_ran_out(loop, config, f.turns) + ". Work in smaller steps.";
  if (f.reverted > 0 && !loop.output_artifacts.empty())
    fb.text += "\n\nloopr undid your changes to files other than your artifact (a " +
               std::string(to_string(loop.type)) + " loop writes only `" +
               loop.output_artifacts.front() + "`): " + std::to_string(f.reverted) + " files.";
  return fb;
}

// A passed iteration: the loop completes (a plan goes to its gate), or waits for the person.
Move on_pass(Loop& loop, int n, const Validation& v, const Config& config) {
  Move m{loop.type == LoopType::plan ? LoopStatus::awaiting_approval : LoopStatus::complete,
         v.has_check ? EndReason::validation_passed : EndReason::completion_signal,
         v.has_check ? v.summary : "completion signal matched"};
  if (config.attended && loop.type != LoopType::plan) {
    // Attended: a passing iteration waits for the person too, before anything builds on it (its
    // merge, its children). A plan waits at its gate anyway.
    loop.run.attended_passed = n;
    m = {LoopStatus::paused, EndReason::attended,
         "attended mode: iteration " + std::to_string(n) + " passed (" + m.reason + "); " +
             resume_hint(loop) + " completes it, `loopr iterate " + loop.id +
             " --feedback …` sends it back to work"};
  }
  return m;
}

// Tests pass but the review did not: the person decides, as in attended mode (`resume`
// completes the loop as it is, `iterate` sends it back with feedback and fresh review rounds).
Move wait_for_person(Loop& loop, int n, EndReason why, const std::string& what) {
  loop.run.attended_passed = n;
  loop.run.review_rounds = 0;
  return {LoopStatus::paused, why,
          what + "; its tests pass: " + resume_hint(loop) +
              " completes it as it is, `loopr iterate " + loop.id +
              " --feedback …` sends it back to work"};
}

// limits.max_same_failures: counts failing validations in a row whose failing tests (or, when
// no test runner's names are recognised, whose output) are the same; the failing tests' names
// for the reason. A validation that passed (a review sent the change back) breaks the run.
std::vector<std::string> count_same_failures(Loop& loop, const Validation& v,
                                             const std::string& fingerprint) {
  if (v.passed) {
    loop.run.same_failures = 0;
    loop.run.last_failing.clear();
    return {};
  }
  std::vector<std::string> tests = failing_tests(v.output);
  std::string joined;
  for (const auto& t : tests) joined += t + "\n";
  const std::string key =
      tests.empty() ? "output " + fingerprint : "tests " + output_fingerprint(joined);
  loop.run.same_failures = loop.run.last_failing == key ? loop.run.same_failures + 1 : 1;
  loop.run.last_failing = key;
  return tests;
}

// The reason of a loop that failed the same way limits.max_same_failures times.
std::string same_failures_reason(int count, const std::vector<std::string>& tests) {
  std::string what = "the validation failed " + std::to_string(count) +
                     " times in a row with the same failing tests (limits.max_same_failures: " +
                     std::to_string(count) + ")";
  if (tests.empty()) return what + "; no test names were recognised, its output was the same";
  what += ": ";
  const std::size_t shown = std::min<std::size_t>(tests.size(), 5);
  for (std::size_t i = 0; i < shown; ++i) what += (i ? ", " : "") + first_line(tests[i], 100);
  if (tests.size() > shown) what += " and " + std::to_string(tests.size() - shown) + " more";
  return what;
}

// A failed iteration: the stop conditions, in order of how much they say about the loop.
Move on_fail(Loop& loop, int n, const IterationFacts& f, const Config& config) {
  const Validation& v = *f.validation;
  const std::string fingerprint = failure_fingerprint(v.output, loop.worktree);
  const int stale =
      (!f.changed && loop.run.last_validation_hash == fingerprint) ? loop.run.no_progress + 1 : 0;
  loop.run.no_progress = stale;
  loop.run.last_validation_hash = fingerprint;
  const std::vector<std::string> failing = count_same_failures(loop, v, fingerprint);
  if (auto why = match_stop_pattern(config, v.output))
    return {LoopStatus::stopped, EndReason::stop_pattern, *why};
  if (f.stop_script) return {LoopStatus::stopped, EndReason::stop_script, *f.stop_script};
  if (!f.question.empty() && n < loop.max_iterations)
    return {LoopStatus::awaiting_answer, EndReason::none, f.question};  // holds no slot
  if (stale >= config.limits.no_progress_iterations)
    return {LoopStatus::failed, EndReason::no_progress,
            "no progress: " + std::to_string(stale) +
                " iterations in a row changed nothing and failed the same way"};
  if (config.limits.max_same_failures > 0 &&
      loop.run.same_failures >= config.limits.max_same_failures)
    return {LoopStatus::failed, EndReason::same_failures,
            same_failures_reason(loop.run.same_failures, failing)};
  if (n >= loop.max_iterations)
    return {LoopStatus::failed, EndReason::max_iterations,
            "reached the maximum of " + std::to_string(loop.max_iterations) +
                " iterations; last: " + v.summary};
  if (config.attended)
    return {LoopStatus::paused, EndReason::attended,
            "attended mode: " + resume_hint(loop) + " to run the next iteration"};
  if (f.pause_requested)
    return {LoopStatus::paused, EndReason::paused_by_user, "paused by the user"};
  return {};
}

}  // namespace

std::string runtime_ran_out(const Loop& loop, const Config& config, int turns) {
  return "iteration's time limit of " +
         format_duration(config.loop(loop.type).iteration_max_runtime) + " (loops." +
         to_string(loop.type) + ".iteration_max_runtime) ended it after " + std::to_string(turns) +
         " model turns";
}

Move at_boundary(Loop& loop, const BoundaryRequests& asked) {
  if (asked.stop) return {LoopStatus::stopped, asked.stop_end, asked.stop_reason};
  if (asked.pause) return {LoopStatus::paused, EndReason::paused_by_user, "paused by the user"};
  if (!loop.run.question.empty() && loop.run.answer.empty())
    // Resumed (or restarted) while its question is still open: it waits for the answer.
    return {LoopStatus::awaiting_answer, EndReason::none, loop.run.question};
  if (loop.run.attended_passed > 0 && loop.run.attended_passed == loop.iteration) {
    // Resumed after an attended pause on a passing iteration: the person let it complete.
    loop.run.attended_passed = 0;
    return {LoopStatus::complete, EndReason::validation_passed,
            "iteration " + std::to_string(loop.iteration) +
                " passed; completed when the person resumed it"};
  }
  return {};
}

namespace {

// The tree's and the loop's spending, the tree's input tokens and runtime (both checks below
// share them).
std::optional<TurnLimit> spending_limit(const Loop& loop, const Config& config, double loop_cost,
                                        double tree_cost, std::int64_t tree_input, TimestampMs now,
                                        TimestampMs plan_start, const RequestBudget& asked) {
  if (config.limits.max_loop_cost_usd > 0 && loop_cost >= config.limits.max_loop_cost_usd)
    return TurnLimit{EndReason::loop_cost_limit,
                     "the loop's cost limit of $" +
                         std::to_string(config.limits.max_loop_cost_usd) +
                         " was reached (limits.max_loop_cost_usd)"};
  if (config.limits.max_cost_usd > 0 && tree_cost >= config.limits.max_cost_usd) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "plan %s has spent $%.2f, its cost limit is $%.2f (%s)",
                  loop.plan_id.c_str(), tree_cost, config.limits.max_cost_usd,
                  cost_limit_source(asked).c_str());
    return TurnLimit{EndReason::cost_limit, buf};
  }
  if (config.limits.max_input_tokens > 0 && tree_input >= config.limits.max_input_tokens)
    return TurnLimit{EndReason::cost_limit,
                     "plan " + loop.plan_id + " has sent " + std::to_string(tree_input) +
                         " input tokens, its limit is " +
                         std::to_string(config.limits.max_input_tokens) +
                         " (limits.max_input_tokens)",
                     true};
  if (config.limits.max_runtime.count() > 0 &&
      now - plan_start >= config.limits.max_runtime.count())
    return TurnLimit{EndReason::runtime_limit,
                     "plan " + loop.plan_id + " has worked longer than its limit of " +
                         format_duration(config.limits.max_runtime) +
                         (loop.type == LoopType::plan ? "" : " since it was approved") + " (" +
                         runtime_limit_source(asked) + ")"};
  return std::nullopt;
}

}  // namespace

Move at_limit(const Loop& loop, const Config& config, const TurnLimit& hit) {
  const EndReason end = hit.end;
  const std::string& reason = hit.reason;
  const bool tree_cap = end == EndReason::cost_limit || end == EndReason::runtime_limit;
  if (!tree_cap || !config.limits.pause_at_limit) return {LoopStatus::failed, end, reason};
  const std::string paused = reason + "; the tree pauses (limits.at_cost_limit: pause): ";
  if (hit.input_tokens)
    return {LoopStatus::paused, end,
            paused + "raise limits.max_input_tokens in .loopr/config.yml, then `loopr resume " +
                loop.plan_id + "` goes on"};
  const std::string raise =
      end == EndReason::runtime_limit ? "--max-runtime DURATION" : "--max-cost USD";
  return {LoopStatus::paused, end,
          paused + "`loopr resume " + loop.plan_id + " " + raise + "` raises the cap and goes on"};
}

Move check_limits(const Loop& loop, const Config& config, double tree_cost, TimestampMs now,
                  TimestampMs plan_start, const RequestBudget& asked, std::int64_t tree_input) {
  if (loop.iteration >= loop.max_iterations)
    return {LoopStatus::failed, EndReason::max_iterations,
            "reached the maximum of " + std::to_string(loop.max_iterations) +
                " iterations without passing validation"};
  if (auto hit = spending_limit(loop, config, loop.usage.cost_usd, tree_cost, tree_input, now,
                                plan_start, asked))
    return at_limit(loop, config, *hit);
  return {};
}

std::optional<TurnLimit> check_turn_limits(const Loop& loop, const Config& config, double tree_cost,
                                           const Usage& so_far, TimestampMs now,
                                           TimestampMs plan_start, const RequestBudget& asked,
                                           std::int64_t tree_input) {
  auto hit = spending_limit(loop, config, loop.usage.cost_usd + so_far.cost_usd,
                            tree_cost + so_far.cost_usd, tree_input + total_input(so_far), now,
                            plan_start, asked);
  if (hit)
    hit->reason += " during iteration " + std::to_string(loop.iteration + 1) +
                   ", which ended after the model turn that reached it";
  return hit;
}

std::int64_t total_input(const Usage& u) {
  return u.input_tokens + u.cache_read_tokens + u.cache_write_tokens;
}

Move check_disk(const Loop& loop, std::optional<std::uint64_t> free, std::uint64_t floor,
                const std::string& dir) {
  if (floor == 0 || !free || *free >= floor) return {};
  return {LoopStatus::paused, EndReason::disk_full,
          disk_full_text(*free, dir) + " (limits.min_free_space is " +
              std::to_string(floor / (1024 * 1024)) +
              " MiB): no iteration starts; it resumes by itself once there is space, or " +
              resume_hint(loop)};
}

Move on_disk_full(const Loop& loop, std::optional<std::uint64_t> free, const std::string& dir,
                  const std::string& what) {
  return {LoopStatus::paused, EndReason::disk_full,
          disk_full_text(free.value_or(0), dir) + " (" + what +
              "); it resumes by itself once there is space, or " + resume_hint(loop)};
}

Move on_model_error(Loop& loop, const llm::LlmError& error, const Config& config) {
  const int errors = loop.run.consecutive_errors + 1;
  loop.run.consecutive_errors = errors;
  loop.run.last_error = error.describe();
  if (!error.retryable)
    return {LoopStatus::failed, EndReason::model_error, "model call failed: " + error.describe()};
  if (errors >= config.limits.circuit_breaker)
    return {LoopStatus::failed, EndReason::circuit_breaker,
            "circuit breaker: " + std::to_string(errors) +
                " consecutive errors; last: " + error.describe()};
  return {};
}

std::chrono::milliseconds error_backoff(std::chrono::milliseconds base, int errors) {
  return std::chrono::milliseconds(
      std::min<long long>(60'000, base.count() << std::clamp(errors - 1, 0, 6)));
}

bool judged(const IterationFacts& f) {
  return f.end != Conversation::End::stopped && f.end != Conversation::End::refused &&
         f.validation && !f.validation->stopped && !f.validation->could_not_start;
}

bool checkpointed(const IterationFacts& f) {
  return judged(f) || f.end == Conversation::End::limit;
}

bool checks_passed(const IterationFacts& f) {
  return judged(f) && f.breaches.empty() && f.validation->passed &&
         (f.validation->has_check || f.signalled);
}

bool passed(const IterationFacts& f) {
  return checks_passed(f) && (!f.review || f.review->verdict == ReviewResult::Verdict::pass);
}

std::string checkpoint_message(const Loop& loop, int n, const IterationFacts& f) {
  std::string summary = f.validation ? f.validation->summary : std::string();
  std::string head = loop_commit_message(loop.id, "iteration " + std::to_string(n) + ": ");
  if (f.end == Conversation::End::limit) return head + "stopped: " + to_string(f.limit.end);
  if (checks_passed(f) && f.review) {
    if (f.review->verdict == ReviewResult::Verdict::error)
      return head + "passed, not reviewed: " + first_line(f.review->summary, 60);
    summary = f.review->summary;
  }
  return head + (passed(f) ? "passed" : "failed: " + first_line(summary, 72));
}

bool wants_stop_scripts(const IterationFacts& f, const Config& config) {
  return judged(f) && !passed(f) && !config.limits.stop_scripts.empty() &&
         !match_stop_pattern(config, f.validation->output);
}

std::string failure_fingerprint(const std::string& validation_output, const std::string& workdir) {
  NormalizeOptions options;
  if (!workdir.empty()) options.workdirs.push_back(workdir);
  return output_fingerprint(validation_output, options);
}

IterationVerdict decide(Loop& loop, int n, const IterationFacts& f, const Config& config) {
  if (f.end == Conversation::End::stopped)
    return {{LoopStatus::stopped, f.stop_end, f.stop_reason}, IterationOutcome::stopped};
  if (f.end == Conversation::End::refused)
    return {{LoopStatus::failed, EndReason::model_refused, f.refusal}, IterationOutcome::error};
  if (f.end == Conversation::End::limit)
    // A limit reached between turns: the work so far is checkpointed, not judged; at a tree's
    // cap the loop pauses (limits.at_cost_limit: pause) or fails.
    return {at_limit(loop, config, f.limit), IterationOutcome::stopped};
  if (!f.validation)
    return {{LoopStatus::failed, EndReason::internal_error, "the check did not run"}, IterationOutcome::error};
  const Validation& v = *f.validation;
  if (v.stopped) return {{LoopStatus::stopped, f.stop_end, f.stop_reason}, IterationOutcome::stopped};
  if (v.could_not_start)
    // The sandbox or the cluster never ran the check: not the code's failure, so no failed
    // iteration and nothing for the model. The loop waits for the person (the work stays in
    // the worktree; `loopr resume` runs iteration n again).
    return {{LoopStatus::paused, EndReason::validation_not_run,
             "the validation could not run: " + v.feedback + "; then " + resume_hint(loop)},
            std::nullopt};

  loop.run.consecutive_errors = 0;
  // An answer is shown once; a new question replaces the old one (a passing loop drops it).
  if (!loop.run.answer.empty()) loop.run.question.clear(), loop.run.answer.clear();
  if (passed(f)) {
    Validation shown = v;
    if (f.review) shown.summary += "; review passed";
    return {on_pass(loop, n, shown, config), IterationOutcome::passed};
  }
  if (checks_passed(f) && f.review->verdict == ReviewResult::Verdict::error)
    return {wait_for_person(loop, n, EndReason::review_error, f.review->summary), IterationOutcome::passed};
  if (!f.question.empty()) loop.run.question = f.question;
  add_feedback(loop.run, failure_feedback(loop, n, f, config));
  if (checks_passed(f) && ++loop.run.review_rounds >= config.review.max_rounds)
    return {wait_for_person(loop, n, EndReason::review_rejected,
                            "the reviewer sent it back " + std::to_string(loop.run.review_rounds) +
                                " times (loops.review.max_rounds), last: " + f.review->summary),
            IterationOutcome::failed};
  Move m = on_fail(loop, n, f, config);
  return {m, m.status == LoopStatus::awaiting_answer ? IterationOutcome::asked
                                                        : IterationOutcome::failed};
}

}  // namespace loopr::engine
