// After a failure: a code loop's first attempt gets a fresh second one; anything else rolls up.
#include <gtest/gtest.h>

#include "manager/tree_fixture.hpp"
#include "manager/tree_rules.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {

Loop failed(const std::string& id,
            const std::string& reason = "reached the maximum of 5 iterations") {
  Loop l = loop(id, LoopStatus::failed, 5);
  l.status_reason = reason;
  return l;
}

const char* status_event_to(const Event& e) {
  return e.type == "status_changed" ? e.data["to"].get_ref<const std::string&>().c_str() : "";
}

}  // namespace

TEST(FailureRulesTest, ACodeLoopsFirstFailureIsRetriedFreshTheSecondRollsUp) {
  Loop code = failed("code-001-001-001");
  EXPECT_EQ(after_failure(code), FailureStep::retry_fresh);
  code.tree.attempt = 2;
  EXPECT_EQ(after_failure(code), FailureStep::roll_up);
}

TEST(FailureRulesTest, OtherTypesRollUpAtOnce) {
  EXPECT_EQ(after_failure(failed("001-001")), FailureStep::roll_up);
  EXPECT_EQ(after_failure(failed("001-001-001")), FailureStep::roll_up);
  EXPECT_EQ(after_failure(failed("001")), FailureStep::roll_up);
}

TEST(FailureRulesTest, HandledFailuresAndRejectedPlansNeedNothing) {
  Loop rolled = failed("code-001-001-001");
  rolled.tree.rolled_up = true;
  EXPECT_EQ(after_failure(rolled), FailureStep::none);
  Loop rejected = failed("001");
  rejected.tree.user_rejected = true;
  EXPECT_EQ(after_failure(rejected), FailureStep::none);
  EXPECT_EQ(after_failure(loop("001-001", LoopStatus::running)), FailureStep::none);
}

TEST(FailureRulesTest,
     TheFreshAttemptStartsOverFromTheIntegrationBranchWithTheFailureInItsFeedback) {
  Loop code = failed("code-001-001-001", "no progress: 3 iterations in a row changed nothing");
  code.worktree = "/repo/.loopr/worktrees/code-001-001-001";
  code.branch = "loopr/001-loops/code-001-001-001";
  code.tree.based_on = "abc";
  code.run.no_progress = 3;
  code.run.last_validation_hash = "123";
  code.run.consecutive_errors = 2;
  std::vector<Event> events;
  ASSERT_TRUE(make_retry(code, "loopr/archive/code-001-001-001", 20, events).ok());
  EXPECT_EQ(code.status, LoopStatus::pending);
  EXPECT_EQ(code.tree.attempt, 2);
  EXPECT_TRUE(code.worktree.empty());
  EXPECT_TRUE(code.branch.empty());
  EXPECT_TRUE(code.tree.based_on.empty());
  EXPECT_EQ(code.run.no_progress, 0);
  EXPECT_TRUE(code.run.last_validation_hash.empty());
  EXPECT_EQ(code.run.consecutive_errors, 0);
  EXPECT_EQ(code.max_iterations, 25) << "a new budget after the 5 used";
  ASSERT_EQ(code.run.feedback.size(), 1u);
  EXPECT_EQ(code.run.feedback[0].source, FeedbackSource::engine);
  EXPECT_NE(code.run.feedback[0].text.find("on branch loopr/archive/code-001-001-001"),
            std::string::npos);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, "retry");
  EXPECT_EQ(events[0].data["archived_branch"], "loopr/archive/code-001-001-001");
  EXPECT_STREQ(status_event_to(events[1]), "pending");
}

TEST(FailureRulesTest, RollingUpFailsTheAncestorsAndStopsTheOnesThatRun) {
  Loop code = failed("code-001-001-001", "circuit breaker: 5 consecutive errors");
  std::vector<Loop> ancestors = {finished("001-001-001"), loop("001-001", LoopStatus::running),
                                 finished("001")};
  std::vector<Event> events;
  RollUp up = roll_up(
      code, ancestors, [](const std::string& id) { return id == "001-001"; }, events);
  EXPECT_EQ(up.reason, "code-001-001-001 failed: circuit breaker: 5 consecutive errors");
  EXPECT_EQ(up.stop_runs, std::vector<std::string>{"001-001"});
  ASSERT_EQ(up.updates.size(), 3u);
  EXPECT_EQ(up.updates[0].id, "001-001-001");
  EXPECT_EQ(up.updates[0].status, LoopStatus::failed);
  EXPECT_EQ(up.updates[0].status_reason, up.reason);
  EXPECT_TRUE(up.updates[0].tree.rolled_up) << "failed by a descendant: nothing more is owed";
  EXPECT_EQ(up.updates[1].id, "001");
  EXPECT_EQ(up.updates[2].id, "code-001-001-001");
  EXPECT_TRUE(up.updates[2].tree.rolled_up);
  EXPECT_EQ(events.size(), 2u) << "one status change per ancestor that fails now";
}

TEST(FailureRulesTest, RollingUpLeavesFailedAndInvalidatedAncestorsAlone) {
  std::vector<Loop> ancestors = {failed("001-001-001"), loop("001-001", LoopStatus::invalidated)};
  std::vector<Event> events;
  RollUp up = roll_up(
      failed("code-001-001-001"), ancestors, [](const std::string&) { return false; }, events);
  ASSERT_EQ(up.updates.size(), 1u);
  EXPECT_EQ(up.updates[0].id, "code-001-001-001");
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(up.stop_runs.empty());
}
