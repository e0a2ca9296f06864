// The iteration rules' say on protected files and the optional review (issue 29), as data:
// src/engine/iteration_rules.hpp with the facts filled in by hand. No store, git or model.
#include <gtest/gtest.h>

#include "engine/iteration_rules.hpp"
#include "engine/rule_loops.hpp"

using namespace loopr;
using namespace loopr::engine;

namespace {

Loop code_loop(int max_iterations = 5) {
  return loopr::testing::running_code_loop(max_iterations);
}

IterationFacts passing(std::optional<ReviewResult> review = std::nullopt) {
  IterationFacts f;
  Validation v;
  v.passed = true;
  v.exit_code = 0;
  v.summary = "tests pass";
  f.validation = v;
  f.changed = true;
  f.review = std::move(review);
  return f;
}

ReviewResult review(ReviewResult::Verdict verdict, std::string summary, std::string feedback = {}) {
  ReviewResult r;
  r.verdict = verdict;
  r.summary = std::move(summary);
  r.feedback = std::move(feedback);
  return r;
}

Config config(int max_rounds = 2) {
  Config c;
  c.review.enabled = true;
  c.review.max_rounds = max_rounds;
  return c;
}

}  // namespace

TEST(ReviewRulesTest, ABreachFailsTheIterationWithFeedbackNamingTheFiles) {
  Loop l = code_loop();
  IterationFacts f;
  Validation v;
  v.passed = false;
  v.summary = "changed the test harness: tests/run.sh (not listed in its phase)";
  v.feedback = "- `tests/run.sh` (modified): restore it; it decides whether tests pass.";
  f.validation = v;
  f.changed = true;
  f.breaches = {
      {"tests/run.sh", PathChange::Kind::modified, Breach::Role::harness, "/tests/run.sh"}};
  auto verdict = decide(l, 1, f, config());
  EXPECT_EQ(verdict.record, IterationOutcome::failed);
  EXPECT_EQ(verdict.move.status, LoopStatus::running);
  ASSERT_EQ(l.run.feedback.size(), 1u);
  EXPECT_EQ(l.run.feedback[0].source, FeedbackSource::protected_files);
  EXPECT_NE(l.run.feedback[0].text.find("restore it"), std::string::npos);
  EXPECT_FALSE(passed(f));
  EXPECT_NE(checkpoint_message(l, 1, f).find("failed: changed the test harness"),
            std::string::npos);
  // Even a check that "passed" does not count while a breach stands.
  f.validation->passed = true;
  EXPECT_FALSE(checks_passed(f));
}

TEST(ReviewRulesTest, APassingReviewCompletesTheLoop) {
  Loop l = code_loop();
  auto f = passing(review(ReviewResult::Verdict::pass, "review passed"));
  auto v = decide(l, 1, f, config());
  EXPECT_EQ(v.record, IterationOutcome::passed);
  EXPECT_EQ(v.move.status, LoopStatus::complete);
  EXPECT_EQ(v.move.end, EndReason::validation_passed);
  EXPECT_NE(v.move.reason.find("review passed"), std::string::npos) << v.move.reason;
}

TEST(ReviewRulesTest, AFailedReviewSendsTheLoopBackWithTheReviewersWords) {
  Loop l = code_loop();
  auto f = passing(review(ReviewResult::Verdict::fail, "review: no test", "no test\n- add one"));
  auto v = decide(l, 1, f, config());
  EXPECT_EQ(v.record, IterationOutcome::failed);
  EXPECT_EQ(v.move.status, LoopStatus::running);
  EXPECT_EQ(l.run.review_rounds, 1);
  ASSERT_EQ(l.run.feedback.size(), 1u);
  EXPECT_EQ(l.run.feedback[0].source, FeedbackSource::review);
  EXPECT_NE(l.run.feedback[0].text.find("- add one"), std::string::npos);
  EXPECT_NE(checkpoint_message(l, 1, f).find("failed: review: no test"), std::string::npos);
}

TEST(ReviewRulesTest, TheLastReviewRoundHandsTheLoopToThePerson) {
  Loop l = code_loop(10);
  auto f = passing(review(ReviewResult::Verdict::fail, "review: still wrong"));
  decide(l, 1, f, config(2));
  auto v = decide(l, 2, f, config(2));
  EXPECT_EQ(v.move.status, LoopStatus::paused);
  EXPECT_EQ(v.move.end, EndReason::review_rejected);
  EXPECT_NE(v.move.reason.find("still wrong"), std::string::npos) << v.move.reason;
  EXPECT_EQ(l.run.attended_passed, 2);  // `resume` completes it, as in attended mode
  EXPECT_EQ(l.run.review_rounds, 0);    // fresh rounds after the person's word
}

TEST(ReviewRulesTest, AReviewerErrorHandsTheLoopToThePerson) {
  Loop l = code_loop();
  auto f = passing(review(ReviewResult::Verdict::error, "the reviewer could not be asked: 500"));
  auto v = decide(l, 1, f, config());
  EXPECT_EQ(v.record, IterationOutcome::passed);  // its tests pass
  EXPECT_EQ(v.move.status, LoopStatus::paused);
  EXPECT_EQ(v.move.end, EndReason::review_error);
  EXPECT_EQ(l.run.attended_passed, 1);
  EXPECT_NE(checkpoint_message(l, 1, f).find("passed, not reviewed"), std::string::npos);
}

TEST(ReviewRulesTest, FailedTestsAreNotReviewed) {
  Loop l = code_loop();
  IterationFacts f = passing();
  f.validation->passed = false;
  f.validation->summary = "exit 1";
  auto v = decide(l, 1, f, config());
  EXPECT_EQ(v.record, IterationOutcome::failed);
  EXPECT_EQ(l.run.review_rounds, 0);
  EXPECT_EQ(l.run.feedback[0].source, FeedbackSource::validation);
}
