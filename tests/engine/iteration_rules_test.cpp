// The engine's decisions as data (src/engine/iteration_rules.hpp): each rung of the stop ladder,
// their order, the boundary, limits and model errors. No store, git, process or model.
#include <gtest/gtest.h>

#include <loopr/core/disk.hpp>

#include "engine/iteration_rules.hpp"
#include "engine/rule_loops.hpp"

using namespace loopr;
using namespace loopr::engine;
using End = Conversation::End;

namespace {

Loop code_loop(int iteration = 0, int max_iterations = 5) {
  return loopr::testing::running_code_loop(max_iterations, iteration);
}

Validation check(bool ok, std::string output = "1 failed") {
  Validation v;
  v.passed = ok;
  v.exit_code = ok ? 0 : 1;
  v.output = output;
  v.summary = ok ? "tests pass" : "exit 1: " + output;
  v.feedback = output;
  return v;
}

IterationFacts ran(Validation v, bool changed = true) {
  IterationFacts f;
  f.validation = std::move(v);
  f.changed = changed;
  return f;
}

Config config() {
  Config c;
  c.limits.no_progress_iterations = 3;
  return c;
}

}  // namespace

TEST(IterationRulesTest, APassingCodeIterationCompletes) {
  Loop l = code_loop();
  auto v = decide(l, 1, ran(check(true)), config());
  EXPECT_EQ(v.record, IterationOutcome::passed);
  EXPECT_EQ(v.move, (Move{LoopStatus::complete, EndReason::validation_passed, "tests pass"}));
  EXPECT_TRUE(l.run.feedback.empty());
}

TEST(IterationRulesTest, APassingPlanGoesToItsGate) {
  Loop l = code_loop();
  l.type = LoopType::plan;
  auto v = decide(l, 1, ran(check(true)), config());
  EXPECT_EQ(v.move.status, LoopStatus::awaiting_approval);
  EXPECT_EQ(v.record, IterationOutcome::passed);
}

TEST(IterationRulesTest, WithoutACheckOnlyTheCompletionSignalPasses) {
  Loop l = code_loop();
  Validation none = check(true);
  none.has_check = false;
  IterationFacts f = ran(none);
  auto v = decide(l, 1, f, config());
  EXPECT_EQ(v.record, IterationOutcome::failed);
  ASSERT_EQ(l.run.feedback.size(), 1u);
  EXPECT_EQ(l.run.feedback.back().summary, "no completion signal");
  f.signalled = true;
  Loop again = code_loop();
  v = decide(again, 1, f, config());
  EXPECT_EQ(v.move, (Move{LoopStatus::complete, EndReason::completion_signal,
                          "completion signal matched"}));
}

TEST(IterationRulesTest, AttendedPausesAfterAPassAndRemembersIt) {
  Config c = config();
  c.attended = true;
  Loop l = code_loop(2);
  auto v = decide(l, 3, ran(check(true)), c);
  EXPECT_EQ(v.record, IterationOutcome::passed);
  EXPECT_EQ(v.move.status, LoopStatus::paused);
  EXPECT_EQ(v.move.end, EndReason::attended);
  EXPECT_EQ(l.run.attended_passed, 3);
  // Resumed: the boundary completes it without another iteration.
  l.iteration = 3;
  Move m = at_boundary(l, {});
  EXPECT_EQ(m.status, LoopStatus::complete);
  EXPECT_EQ(m.end, EndReason::validation_passed);
  EXPECT_EQ(l.run.attended_passed, 0);
}

TEST(IterationRulesTest, AFailureGoesOnWithItsFeedback) {
  Loop l = code_loop();
  IterationFacts f = ran(check(false, "assert x == 2"));
  f.end = End::max_turns;
  f.turns = 50;
  auto v = decide(l, 1, f, config());
  EXPECT_TRUE(v.move.goes_on());
  EXPECT_EQ(v.record, IterationOutcome::failed);
  ASSERT_EQ(l.run.feedback.size(), 1u);
  EXPECT_EQ(l.run.feedback[0].source, FeedbackSource::validation);
  EXPECT_NE(l.run.feedback[0].text.find("assert x == 2"), std::string::npos);
  EXPECT_NE(l.run.feedback[0].text.find("after 50 model turns"), std::string::npos);
}

TEST(IterationRulesTest, NoProgressCountsUnchangedIdenticalFailures) {
  Loop l = code_loop();
  const Config c = config();  // no_progress_iterations: 3
  auto v = decide(l, 1, ran(check(false), true), c);
  EXPECT_EQ(l.run.no_progress, 0);
  v = decide(l, 2, ran(check(false), false), c);
  EXPECT_EQ(l.run.no_progress, 1);
  v = decide(l, 3, ran(check(false), true), c);  // a change resets it
  EXPECT_EQ(l.run.no_progress, 0);
  v = decide(l, 4, ran(check(false, "other"), false), c);  // so does another failure
  EXPECT_EQ(l.run.no_progress, 0);
  l.max_iterations = 20;
  decide(l, 5, ran(check(false, "other"), false), c);
  decide(l, 6, ran(check(false, "other"), false), c);
  v = decide(l, 7, ran(check(false, "other"), false), c);
  EXPECT_EQ(l.run.no_progress, 3);
  EXPECT_EQ(v.move.status, LoopStatus::failed);
  EXPECT_EQ(v.move.end, EndReason::no_progress);
}

// The same failure with other timings, temp folders and pids (and the worktree's own path) is
// the same failure: pytest's `in 0.20s` never resets the count (issue 27).
TEST(IterationRulesTest, NoProgressComparesNormalizedOutput) {
  Loop l = code_loop(0, 20);
  l.worktree = "/repo/wt-a";
  const Config c = config();
  decide(l, 1,
         ran(check(false, "E No module named 'pkg' (/tmp/a1, pid 10)\n2 errors in 0.20s"), false),
         c);
  decide(l, 2,
         ran(check(false, "E No module named 'pkg' (/tmp/b7, pid 11)\n2 errors in 0.05s"), false),
         c);
  EXPECT_EQ(l.run.no_progress, 1);
  decide(
      l, 3,
      ran(check(false,
                "rootdir: /repo/wt-a\nE No module named 'pkg' (/tmp/c, pid 9)\n2 errors in 1.5s"),
          false),
      c);
  EXPECT_EQ(l.run.no_progress, 0);  // a new line of output: another failure
  decide(
      l, 4,
      ran(check(false,
                "rootdir: /repo/wt-a\nE No module named 'pkg' (/tmp/d, pid 8)\n2 errors in 0.1s"),
          false),
      c);
  EXPECT_EQ(l.run.no_progress, 1);
  EXPECT_EQ(failure_fingerprint("rootdir: /repo/wt-a", "/repo/wt-a"),
            failure_fingerprint("rootdir: /elsewhere/wt-b", "/elsewhere/wt-b"));
}

TEST(IterationRulesTest, MaxIterationsFailsTheLastFailedIteration) {
  Loop l = code_loop(4, 5);
  auto v = decide(l, 5, ran(check(false)), config());
  EXPECT_EQ(v.move.status, LoopStatus::failed);
  EXPECT_EQ(v.move.end, EndReason::max_iterations);
  EXPECT_NE(v.move.reason.find("maximum of 5"), std::string::npos);
}

TEST(IterationRulesTest, TheLadderIsInOrder) {
  Config c = config();
  c.limits.stop_on_patterns = {"FATAL"};
  c.attended = true;
  // A stop pattern beats a stop script, a question, no progress and the last iteration.
  Loop l = code_loop(4, 5);
  l.run.no_progress = 5;
  l.run.last_validation_hash = failure_fingerprint("FATAL: disk");
  IterationFacts f = ran(check(false, "FATAL: disk"), false);
  f.stop_script = "stop script `x`: enough";
  f.question = "which port?";
  EXPECT_FALSE(wants_stop_scripts(f, c));
  auto v = decide(l, 5, f, c);
  EXPECT_EQ(v.move.end, EndReason::stop_pattern);
  EXPECT_EQ(v.move.status, LoopStatus::stopped);
  // Without the pattern, the stop script.
  f.validation->output = "plain failure";
  l = code_loop(4, 5);
  v = decide(l, 5, f, c);
  EXPECT_EQ(v.move, (Move{LoopStatus::stopped, EndReason::stop_script, "stop script `x`: enough"}));
  // Without the script, the question (while iterations are left).
  f.stop_script.reset();
  l = code_loop(3, 5);
  v = decide(l, 4, f, c);
  EXPECT_EQ(v.move.status, LoopStatus::awaiting_answer);
  EXPECT_EQ(v.record, IterationOutcome::asked);
  EXPECT_EQ(l.run.question, "which port?");
  // On the last iteration a question does not hold the loop: max iterations.
  l = code_loop(4, 5);
  v = decide(l, 5, f, c);
  EXPECT_EQ(v.move.end, EndReason::max_iterations);
  // Nothing else: attended pauses after the failed iteration.
  f.question.clear();
  l = code_loop(1, 5);
  v = decide(l, 2, f, c);
  EXPECT_EQ(v.move.status, LoopStatus::paused);
  EXPECT_EQ(v.move.end, EndReason::attended);
  // A pause the person asked for.
  c.attended = false;
  f.pause_requested = true;
  l = code_loop(1, 5);
  v = decide(l, 2, f, c);
  EXPECT_EQ(v.move, (Move{LoopStatus::paused, EndReason::paused_by_user, "paused by the user"}));
}

TEST(IterationRulesTest, StopScriptsRunOnlyForJudgedFailures) {
  Config c = config();
  c.limits.stop_scripts = {"test -f STOP"};
  EXPECT_TRUE(wants_stop_scripts(ran(check(false)), c));
  EXPECT_FALSE(wants_stop_scripts(ran(check(true)), c));
  IterationFacts stopped;
  stopped.end = End::stopped;
  EXPECT_FALSE(wants_stop_scripts(stopped, c));
  c.limits.stop_scripts.clear();
  EXPECT_FALSE(wants_stop_scripts(ran(check(false)), c));
}

TEST(IterationRulesTest, AnAnswerIsShownOnceAndAPassDropsTheQuestion) {
  Loop l = code_loop(1);
  l.run.question = "which port?";
  l.run.answer = "8080";
  decide(l, 2, ran(check(false)), config());
  EXPECT_TRUE(l.run.question.empty());
  EXPECT_TRUE(l.run.answer.empty());
  IterationFacts asked = ran(check(true));
  asked.question = "anything else?";
  decide(l, 3, asked, config());
  EXPECT_TRUE(l.run.question.empty());  // it passed anyway
}

TEST(IterationRulesTest, EndingsWithoutAJudgedCheck) {
  Loop l = code_loop();
  l.run.consecutive_errors = 2;
  IterationFacts f;
  f.end = End::stopped;
  f.stop_reason = "stopped by the user";
  auto v = decide(l, 1, f, config());
  EXPECT_EQ(v.move, (Move{LoopStatus::stopped, EndReason::stopped_by_user, "stopped by the user"}));
  EXPECT_EQ(v.record, IterationOutcome::stopped);
  EXPECT_FALSE(judged(f));

  f.end = End::refused;
  f.refusal = "the model refused (cyber)";
  v = decide(l, 1, f, config());
  EXPECT_EQ(v.move.end, EndReason::model_refused);
  EXPECT_EQ(v.record, IterationOutcome::error);

  IterationFacts daemon = ran(check(false));
  daemon.validation->stopped = true;
  daemon.stop_reason = "the daemon is stopping";
  daemon.stop_end = EndReason::daemon_stopped;
  v = decide(l, 1, daemon, config());
  EXPECT_EQ(v.move.status, LoopStatus::stopped);
  EXPECT_EQ(v.move.end, EndReason::daemon_stopped);

  IterationFacts lost = ran(check(false));
  lost.validation->could_not_start = true;
  lost.validation->feedback = "bwrap: setting up uid map: Permission denied";
  v = decide(l, 1, lost, config());
  EXPECT_FALSE(v.record.has_value());  // not an iteration
  EXPECT_EQ(v.move.status, LoopStatus::paused);
  EXPECT_EQ(v.move.end, EndReason::validation_not_run);
  EXPECT_NE(v.move.reason.find("loopr resume code-001-001-001"), std::string::npos);
  EXPECT_EQ(l.run.consecutive_errors, 2);  // untouched: nothing was judged
}

TEST(IterationRulesTest, CheckpointMessages) {
  Loop l = code_loop();
  EXPECT_EQ(checkpoint_message(l, 3, ran(check(true))),
            "loopr(code-001-001-001): iteration 3: passed");
  EXPECT_EQ(checkpoint_message(l, 4, ran(check(false, "boom"))),
            "loopr(code-001-001-001): iteration 4: failed: exit 1: boom");
}

TEST(IterationRulesTest, TheBoundary) {
  Loop l = code_loop(2);
  EXPECT_TRUE(at_boundary(l, {}).goes_on());
  BoundaryRequests stop{true, "stopped: 001-002 failed (on_failure: stop_siblings)",
                        EndReason::sibling_failed, true};
  EXPECT_EQ(at_boundary(l, stop).end, EndReason::sibling_failed);  // a stop beats a pause
  BoundaryRequests pause;
  pause.pause = true;
  EXPECT_EQ(at_boundary(l, pause),
            (Move{LoopStatus::paused, EndReason::paused_by_user, "paused by the user"}));
  l.run.question = "which port?";
  EXPECT_EQ(at_boundary(l, {}).status, LoopStatus::awaiting_answer);
  l.run.answer = "8080";
  EXPECT_TRUE(at_boundary(l, {}).goes_on());
}

TEST(IterationRulesTest, Limits) {
  Config c = config();
  c.limits.max_cost_usd = 10;
  c.limits.max_loop_cost_usd = 2;
  c.limits.max_runtime = std::chrono::hours(1);
  const TimestampMs start = 1'000'000;
  Loop l = code_loop(1, 5);
  EXPECT_TRUE(check_limits(l, c, 1.0, start + 1000, start).goes_on());
  EXPECT_EQ(check_limits(l, c, 10.0, start, start).end, EndReason::cost_limit);
  EXPECT_EQ(check_limits(l, c, 1.0, start + 3'600'000, start).end, EndReason::runtime_limit);
  l.usage.cost_usd = 2.5;
  EXPECT_EQ(check_limits(l, c, 1.0, start, start).end, EndReason::loop_cost_limit);
  l.iteration = 5;
  Move m = check_limits(l, c, 1.0, start, start);
  EXPECT_EQ(m.end, EndReason::max_iterations);  // iterations first
  EXPECT_EQ(m.status, LoopStatus::failed);
  c.limits.max_cost_usd = 0;  // 0: no limit
  l.iteration = 1;
  l.usage.cost_usd = 0;
  EXPECT_TRUE(check_limits(l, c, 1e9, start, start).goes_on());
}

TEST(IterationRulesTest, LimitsBetweenTurnsCountWhatTheIterationSpentSoFar) {
  Config c = config();
  c.limits.max_cost_usd = 10;
  c.limits.max_runtime = std::chrono::hours(1);
  const TimestampMs start = 1'000'000;
  Loop l = code_loop(2, 5);
  Usage so_far;
  so_far.cost_usd = 3;
  EXPECT_FALSE(check_turn_limits(l, c, 6.0, so_far, start, start));
  so_far.cost_usd = 4;  // 6 before the iteration + 4 in it: the limit
  auto hit = check_turn_limits(l, c, 6.0, so_far, start, start);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->end, EndReason::cost_limit);
  EXPECT_NE(hit->reason.find("(limits.max_cost_usd) during iteration 3"), std::string::npos)
      << hit->reason;
  // The request's own limit names itself; the runtime counts too.
  RequestBudget asked;
  asked.max_cost_usd = 10;
  EXPECT_NE(check_turn_limits(l, c, 6.0, so_far, start, start, asked)->reason.find(
                "submit --max-cost"),
            std::string::npos);
  so_far.cost_usd = 0;
  EXPECT_EQ(check_turn_limits(l, c, 0, so_far, start + 3'600'000, start)->end,
            EndReason::runtime_limit);
  // The loop's own limit with the iteration's spending.
  c.limits.max_loop_cost_usd = 2;
  l.usage.cost_usd = 1.5;
  so_far.cost_usd = 0.5;
  EXPECT_EQ(check_turn_limits(l, c, 0, so_far, start, start)->end, EndReason::loop_cost_limit);
  // The iteration count is not a turn's business.
  l = code_loop(5, 5);
  EXPECT_FALSE(check_turn_limits(l, c, 0, Usage{}, start, start));
}

TEST(IterationRulesTest, AnIterationEndedByALimitIsCheckpointedAndFailsTheLoop) {
  Loop l = code_loop(0, 5);
  Config fail = config();
  fail.limits.pause_at_limit = false;  // limits.at_cost_limit: fail
  IterationFacts f;
  f.end = End::limit;
  f.limit = {EndReason::cost_limit, "plan 001 has spent $5.10"};
  EXPECT_TRUE(checkpointed(f));
  EXPECT_FALSE(judged(f));
  EXPECT_FALSE(passed(f));
  EXPECT_FALSE(wants_stop_scripts(f, config()));
  EXPECT_EQ(checkpoint_message(l, 1, f), "loopr(code-001-001-001): iteration 1: stopped: cost_limit");
  IterationVerdict v = decide(l, 1, f, fail);
  EXPECT_EQ(v.move, (Move{LoopStatus::failed, EndReason::cost_limit, "plan 001 has spent $5.10"}));
  EXPECT_EQ(v.record, IterationOutcome::stopped);
  // The default (limits.at_cost_limit: pause): the loop pauses and names what goes on.
  IterationVerdict paused = decide(l, 1, f, config());
  EXPECT_EQ(paused.move.status, LoopStatus::paused);
  EXPECT_EQ(paused.move.end, EndReason::cost_limit);
  EXPECT_NE(paused.move.reason.find("`loopr resume 001 --max-cost USD`"), std::string::npos)
      << paused.move.reason;
  EXPECT_EQ(paused.record, IterationOutcome::stopped);
  // A loop's own cap (max_loop_cost_usd) is no tree cap: it fails either way.
  f.limit = {EndReason::loop_cost_limit, "the loop's cost limit"};
  EXPECT_EQ(decide(l, 1, f, config()).move.status, LoopStatus::failed);
  IterationFacts stopped;
  stopped.end = End::stopped;
  EXPECT_FALSE(checkpointed(stopped));
}

TEST(IterationRulesTest, TheTreesCapsPauseByDefaultAndTheTokenCapCountsCachedInput) {
  Loop l = code_loop(0, 5);
  Config c = config();
  c.limits.max_cost_usd = 5;
  c.limits.max_runtime = std::chrono::hours(1);
  const TimestampMs start = 1'000'000;
  Move cost = check_limits(l, c, 10.0, start, start);
  EXPECT_EQ(cost.status, LoopStatus::paused);
  EXPECT_EQ(cost.end, EndReason::cost_limit);
  Move runtime = check_limits(l, c, 1.0, start + 3'600'000, start);
  EXPECT_EQ(runtime.status, LoopStatus::paused);
  EXPECT_NE(runtime.reason.find("--max-runtime"), std::string::npos) << runtime.reason;
  // limits.max_input_tokens: the tree's input so far, cached reads and writes included.
  c.limits.max_input_tokens = 1000;
  EXPECT_TRUE(check_limits(l, c, 1.0, start, start, {}, 999).goes_on());
  Move tokens = check_limits(l, c, 1.0, start, start, {}, 1000);
  EXPECT_EQ(tokens.status, LoopStatus::paused);
  EXPECT_NE(tokens.reason.find("limits.max_input_tokens"), std::string::npos) << tokens.reason;
  // `resume --max-cost` cannot raise the token cap: the reason says what does.
  EXPECT_EQ(tokens.reason.find("--max-cost"), std::string::npos) << tokens.reason;
  EXPECT_NE(tokens.reason.find("raise limits.max_input_tokens in .loopr/config.yml, then `loopr "
                               "resume 001`"),
            std::string::npos)
      << tokens.reason;
  EXPECT_NE(cost.reason.find("`loopr resume 001 --max-cost USD`"), std::string::npos) << cost.reason;
  Usage so_far;
  so_far.input_tokens = 100;
  so_far.cache_read_tokens = 400;
  so_far.cache_write_tokens = 100;
  EXPECT_EQ(total_input(so_far), 600);
  EXPECT_FALSE(check_turn_limits(l, c, 0, so_far, start, start, {}, 399));
  EXPECT_TRUE(check_turn_limits(l, c, 0, so_far, start, start, {}, 400));
  c.limits.pause_at_limit = false;
  EXPECT_EQ(check_limits(l, c, 10.0, start, start).status, LoopStatus::failed);
}

TEST(IterationRulesTest, ARequestsBudgetReplacesTheConfigsLimitsForItsTree) {
  Config c = config();
  RequestBudget b;
  EXPECT_EQ(tree_config(std::make_shared<const Config>(c), b)->limits.max_cost_usd,
            c.limits.max_cost_usd);
  b.max_cost_usd = 3;
  b.max_runtime = std::chrono::minutes(30);
  b.max_iterations = 2;
  Config t = with_budget(c, b);
  EXPECT_EQ(t.limits.max_cost_usd, 3);
  EXPECT_EQ(t.limits.max_runtime, std::chrono::minutes(30));
  for (auto type : {LoopType::plan, LoopType::spec, LoopType::phase, LoopType::code})
    EXPECT_EQ(t.loop(type).max_iterations, 2);
  EXPECT_EQ(cost_limit_source(b), "submit --max-cost");
  EXPECT_EQ(runtime_limit_source(RequestBudget{}), "limits.max_runtime");
}

TEST(IterationRulesTest, BelowTheFreeSpaceFloorNoIterationStarts) {
  Loop l = code_loop(1, 5);
  const std::uint64_t mib = 1024 * 1024;
  EXPECT_TRUE(check_disk(l, 300 * mib, 256 * mib, "/repo").goes_on());
  EXPECT_TRUE(check_disk(l, std::nullopt, 256 * mib, "/repo").goes_on());  // not known: no say
  EXPECT_TRUE(check_disk(l, 1 * mib, 0, "/repo").goes_on());                // 0: no floor
  Move m = check_disk(l, 12 * mib + 5, 256 * mib, "/repo");
  EXPECT_EQ(m.status, LoopStatus::paused);
  EXPECT_EQ(m.end, EndReason::disk_full);
  EXPECT_EQ(m.reason.rfind("disk full: 12 MiB free in /repo (limits.min_free_space is 256 MiB)", 0),
            0u)
      << m.reason;
  Move w = on_disk_full(l, 0, "/repo", "its checkpoint commit failed: No space left on device");
  EXPECT_EQ(w.status, LoopStatus::paused);
  EXPECT_EQ(w.end, EndReason::disk_full);
  EXPECT_EQ(w.reason.rfind("disk full: 0 MiB free in /repo (its checkpoint", 0), 0u) << w.reason;
  EXPECT_TRUE(is_no_space("IO error: No space left on device: While appending to file"));
  EXPECT_TRUE(is_no_space("fatal: unable to write new index file: ENOSPC"));
  EXPECT_FALSE(is_no_space("fatal: not a git repository"));
}

TEST(IterationRulesTest, ModelErrors) {
  Config c = config();
  c.limits.circuit_breaker = 3;
  Loop l = code_loop();
  llm::LlmError retry;
  retry.retryable = true;
  retry.message = "overloaded";
  EXPECT_TRUE(on_model_error(l, retry, c).goes_on());
  EXPECT_TRUE(on_model_error(l, retry, c).goes_on());
  Move m = on_model_error(l, retry, c);
  EXPECT_EQ(m.end, EndReason::circuit_breaker);
  EXPECT_EQ(l.run.consecutive_errors, 3);
  Loop other = code_loop();
  llm::LlmError fatal;
  fatal.retryable = false;
  fatal.message = "invalid x-api-key";
  m = on_model_error(other, fatal, c);
  EXPECT_EQ(m.status, LoopStatus::failed);
  EXPECT_EQ(m.end, EndReason::model_error);
  EXPECT_NE(other.run.last_error.find("invalid x-api-key"), std::string::npos);
  using std::chrono::milliseconds;
  EXPECT_EQ(error_backoff(milliseconds(1000), 1), milliseconds(1000));
  EXPECT_EQ(error_backoff(milliseconds(1000), 3), milliseconds(4000));
  EXPECT_EQ(error_backoff(milliseconds(1000), 30), milliseconds(60000));
}

TEST(EndReasonTest, SpellingsRoundTripAndOnlyRestingStatusesHoldOne) {
  for (EndReason r : kAllEndReasons) EXPECT_EQ(parse_end_reason(to_string(r)), r) << to_string(r);
  EXPECT_FALSE(parse_end_reason("bogus"));
  Loop l = code_loop();
  ASSERT_TRUE(l.transition_to(LoopStatus::failed, "x", EndReason::max_iterations).ok());
  EXPECT_EQ(l.end_reason, EndReason::max_iterations);
  ASSERT_TRUE(l.transition_to(LoopStatus::pending, "retry", EndReason::max_iterations).ok());
  EXPECT_EQ(l.end_reason, EndReason::none);  // a live loop holds none
  // The store keeps it; an unknown word from a newer loopr reads as `unknown`.
  ASSERT_TRUE(l.transition_to(LoopStatus::running).ok());
  ASSERT_TRUE(l.transition_to(LoopStatus::stopped, "s", EndReason::stop_pattern).ok());
  auto back = loop_from_store_json(to_store_json(l));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->end_reason, EndReason::stop_pattern);
  EXPECT_EQ(to_api_json(l)["end_reason"], "stop_pattern");
  auto stored = to_store_json(l);
  stored["end_reason"] = "a_newer_reason";
  EXPECT_EQ(loop_from_store_json(stored)->end_reason, EndReason::unknown);
  stored.erase("end_reason");  // written before end reasons existed
  EXPECT_EQ(loop_from_store_json(stored)->end_reason, EndReason::none);
  EXPECT_TRUE(to_api_json(code_loop())["end_reason"].is_null());
}
