// The integration gate's rules: a finished tree is checked before it is complete, a failing tip
// gets one fix loop (a code loop under the plan), a fix loop's failure blocks the plan, and the
// verdicts say `validating` and `integration_failed`.
#include <gtest/gtest.h>

#include <loopr/core/ids.hpp>

#include "manager/tree_fixture.hpp"
#include "manager/tree_rules.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {
constexpr MergeMode kAuto = MergeMode::automatic;
}  // namespace

TEST(IntegrationGateRulesTest, AFinishedTreeIsCheckedBeforeItIsCompleteAndTheCheckShowsAsValidating) {
  auto tree = finished_tree();
  EXPECT_EQ(next_tree_step(tree, "001", kAuto), TreeStep::check_integration);
  find(tree, "001").tree.gate_result = GateResult::checking;
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::validating);
  EXPECT_STREQ(to_string(TreeVerdict::validating), "validating");
  find(tree, "001").tree.gate_result = GateResult::passed;
  find(tree, "001").tree.tree_complete = true;
  EXPECT_EQ(next_tree_step(tree, "001", kAuto), TreeStep::merge_into_base);
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::merging);
}

TEST(IntegrationGateRulesTest, AFixLoopIsACodeLoopOnTheIntegrationBranchWithItsOwnBudgetAndTheFailure) {
  Config config;
  config.loops[LoopType::code].validation = "make test";
  config.integration.max_fix_iterations = 3;
  Loop plan = finished("001");
  plan.task = "Add a --shout flag\nmore";
  Loop fix = make_fix_loop(plan, 2, "`make test` failed with exit code 2",
                           "FAIL: shout_test (expected SHOUT)", {"code-001-001-001 (a)"}, config);
  EXPECT_EQ(fix.id, "fix-001-002");
  EXPECT_EQ(fix.type, LoopType::code);
  EXPECT_EQ(fix.parent_id, "001");
  EXPECT_EQ(fix.plan_id, "001");
  EXPECT_EQ(fix.status, LoopStatus::pending);
  EXPECT_EQ(fix.max_iterations, 3);
  EXPECT_EQ(fix.validation_command, "make test");
  EXPECT_EQ(fix.prompt_template, "integration-fix");
  EXPECT_TRUE(fix.worktree.empty());
  EXPECT_TRUE(fix.branch.empty());
  EXPECT_NE(fix.task.find("code-001-001-001 (a)"), std::string::npos) << fix.task;
  EXPECT_NE(fix.task.find("Add a --shout flag"), std::string::npos);
  ASSERT_EQ(fix.run.feedback.size(), 1u);
  EXPECT_NE(fix.run.feedback[0].text.find("FAIL: shout_test"), std::string::npos)
      << "the first prompt's {{progress}} carries the failing output";
  EXPECT_EQ(fix.run.feedback[0].source, FeedbackSource::integration);
}

TEST(IntegrationGateRulesTest, OneFixLoopPerGenerationOrResumeAndItsNumberIsNeverReused) {
  Loop plan = finished("001");
  EXPECT_TRUE(may_make_fix_loop(plan));
  plan.tree.gate_fixes = 1;
  EXPECT_FALSE(may_make_fix_loop(plan));
  auto tree = finished_tree();
  EXPECT_EQ(next_fix_number(tree, "001"), 1);
  Loop old = loop("fix-001-001", LoopStatus::invalidated);
  old.index = 1;
  tree.push_back(old);
  EXPECT_EQ(next_fix_number(tree, "001"), 2);
}

TEST(IntegrationGateRulesTest, AFailedFixLoopBlocksThePlanInsteadOfARetryOrARollUp) {
  Loop fix = loop("fix-001-001", LoopStatus::failed);
  EXPECT_EQ(after_failure(fix), FailureStep::block_plan);
  fix.tree.rolled_up = true;
  EXPECT_EQ(after_failure(fix), FailureStep::none);
  EXPECT_EQ(after_failure(loop("code-001-001-001", LoopStatus::failed)), FailureStep::retry_fresh);
}

TEST(IntegrationGateRulesTest, APlanTheGateBlockedIsIntegrationFailedUntilAPersonActs) {
  auto tree = finished_tree();
  Loop& plan = find(tree, "001");
  plan.status = LoopStatus::blocked;
  plan.tree.gate_result = GateResult::failed;
  EXPECT_TRUE(gate_blocked(plan));
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::integration_failed);
  EXPECT_EQ(next_tree_step(tree, "001", kAuto), TreeStep::none);
  plan.tree.gate_result = GateResult::none;  // blocked for another reason
  EXPECT_FALSE(gate_blocked(plan));
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::running);
}

TEST(IntegrationGateRulesTest, IteratingThePlanForgetsTheGateOfTheOldGeneration) {
  auto tree = finished_tree();
  Loop& plan = find(tree, "001");
  plan.status = LoopStatus::blocked;
  plan.tree.gate_result = GateResult::failed;
  plan.tree.gate_sha = std::string(40, 'b');
  plan.tree.gate_fixes = 1;
  auto change = invalidate_descendants("001", tree, "try again", LoopStatus::running);
  ASSERT_TRUE(change) << change.error().message;
  const Loop& updated = change->updates.front();
  EXPECT_EQ(updated.id, "001");
  EXPECT_EQ(updated.status, LoopStatus::running);
  EXPECT_EQ(updated.tree.gate_result, GateResult::none);
  EXPECT_TRUE(updated.tree.gate_sha.empty());
  EXPECT_EQ(updated.tree.gate_fixes, 0);
}

TEST(IntegrationGateRulesTest, TheRecordKeepsOnlyTheEndOfALongOutput) {
  EXPECT_EQ(gate_output_tail("short\n"), "short\n");
  std::string long_output;
  for (int i = 0; i < 2000; ++i) long_output += "line " + std::to_string(i) + "\n";
  std::string tail = gate_output_tail(long_output);
  EXPECT_LT(tail.size(), 5000u);
  EXPECT_NE(tail.find("line 1999\n"), std::string::npos);
  EXPECT_EQ(tail.find("line 1\n"), std::string::npos);
}
