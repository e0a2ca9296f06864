// Where a tree stands (what a plan row in GET /v1/loops says, and what `submit --wait` waits
// for), and what the tree needs after one of its loops finished.
#include <gtest/gtest.h>

#include "manager/tree_fixture.hpp"
#include "manager/tree_rules.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {
constexpr MergeMode kAuto = MergeMode::automatic;
constexpr MergeMode kManual = MergeMode::manual;
}  // namespace

TEST(TreeVerdictTest, ALoopThatRunsOrWaitsKeepsTheTreeRunning) {
  for (LoopStatus s : {LoopStatus::pending, LoopStatus::running, LoopStatus::paused,
                       LoopStatus::rebasing, LoopStatus::blocked}) {
    auto tree = finished_tree();
    find(tree, "code-001-001-001").status = s;
    EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::running) << to_string(s);
  }
  std::vector<Loop> gate = {loop("001", LoopStatus::awaiting_approval)};
  EXPECT_EQ(tree_verdict(gate, "001", kAuto), TreeVerdict::running) << "a plan at the gate";
}

TEST(TreeVerdictTest, ACompleteLoopTheManagerOwesAStepKeepsItRunning) {
  auto tree = finished_tree();
  find(tree, "001-001").tree.merged_iteration.reset();  // not merged into the integration branch
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::running);
  tree = finished_tree();
  find(tree, "001-001-001").tree.spawned_iteration = 0;  // children of an older iteration
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::running);
  std::vector<Loop> alone = {finished("001")};
  alone[0].tree.spawned_iteration.reset();
  EXPECT_EQ(tree_verdict(alone, "001", kAuto), TreeVerdict::running)
      << "an approved plan without specs yet";
}

TEST(TreeVerdictTest, EveryLoopFinishedIsRunningUntilTheTreeIsMarkedThenMergingOrComplete) {
  auto tree = finished_tree();
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::running) << "the manager marks it next";
  find(tree, "001").tree.tree_complete = true;
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::merging);
  EXPECT_EQ(tree_verdict(tree, "001", kManual), TreeVerdict::complete) << "waits for `loopr merge`";
}

TEST(TreeVerdictTest, TheMergeIntoTheBaseBranchEndsItMergedOrMergeFailed) {
  auto tree = finished_tree();
  find(tree, "001").tree.tree_complete = true;
  find(tree, "001").tree.merge_error = "it conflicts with main in a.txt";
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::merge_failed);
  find(tree, "001").tree.merged_into_base = std::string(40, 'd');  // `loopr merge` after a fix
  find(tree, "001").tree.merge_error.clear();
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::merged);
  EXPECT_EQ(tree_verdict(tree, "001", kManual), TreeVerdict::merged);
}

TEST(TreeVerdictTest, AFailureIsFinalOnlyOnceHandledAndNothingRuns) {
  auto tree = finished_tree();
  Loop& code = find(tree, "code-001-001-001");
  code.status = LoopStatus::failed;
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::running) << "a retry or roll-up is owed";
  code.tree.rolled_up = true;
  find(tree, "001").status = LoopStatus::failed;
  find(tree, "001").tree.rolled_up = true;
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::failed);
  tree.push_back(loop("001-002", LoopStatus::running));
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::running) << "siblings finish first";
}

TEST(TreeVerdictTest, AStoppedLoopOrARejectedPlanEndsTheTreeFailed) {
  auto tree = finished_tree();
  find(tree, "code-001-001-001").status = LoopStatus::stopped;
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::failed);
  std::vector<Loop> rejected = {loop("001", LoopStatus::failed)};
  rejected[0].tree.user_rejected = true;
  EXPECT_EQ(tree_verdict(rejected, "001", kAuto), TreeVerdict::failed);
}

TEST(TreeVerdictTest, InvalidatedLoopsDoNotCount) {
  auto tree = finished_tree();
  find(tree, "001").tree.tree_complete = true;
  Loop old = loop("001-002", LoopStatus::invalidated);
  old.tree.invalidated_worktree = "/repo/.loopr/worktrees/001-002";
  tree.push_back(old);
  tree.push_back(loop("code-001-002-001", LoopStatus::invalidated));
  EXPECT_EQ(tree_verdict(tree, "001", kAuto), TreeVerdict::merging);
  // A plan whose only children are invalidated has not spawned its new generation yet.
  std::vector<Loop> regenerating = {finished("001", 2), loop("001-001", LoopStatus::invalidated)};
  regenerating[0].tree.spawned_iteration.reset();
  EXPECT_EQ(tree_verdict(regenerating, "001", kAuto), TreeVerdict::running);
}

TEST(TreeStepTest, CheckTheIntegrationTipOnlyWhenEveryLoopIsFinishedThenMergeWithAuto) {
  auto tree = finished_tree();
  find(tree, "001-001-001").tree.merged_iteration.reset();
  EXPECT_EQ(next_tree_step(tree, "001", kAuto), TreeStep::none);
  tree = finished_tree();
  EXPECT_EQ(next_tree_step(tree, "001", kAuto), TreeStep::check_integration);
  EXPECT_EQ(next_tree_step(tree, "001", kManual), TreeStep::check_integration);
  find(tree, "001").tree.tree_complete = true;
  EXPECT_EQ(next_tree_step(tree, "001", kAuto), TreeStep::merge_into_base);
  EXPECT_EQ(next_tree_step(tree, "001", kManual), TreeStep::none) << "`loopr merge` does it";
  find(tree, "001").tree.merge_error = "conflict";
  EXPECT_EQ(next_tree_step(tree, "001", kAuto), TreeStep::none)
      << "a failed merge waits for a person";
  find(tree, "001").tree.merge_error.clear();
  find(tree, "001").tree.merged_into_base = "abc";
  EXPECT_EQ(next_tree_step(tree, "001", kAuto), TreeStep::none);
}

TEST(TreeVerdictTest, NamesAreTheApiStrings) {
  EXPECT_STREQ(to_string(TreeVerdict::running), "running");
  EXPECT_STREQ(to_string(TreeVerdict::failed), "failed");
  EXPECT_STREQ(to_string(TreeVerdict::merging), "merging");
  EXPECT_STREQ(to_string(TreeVerdict::complete), "complete");
  EXPECT_STREQ(to_string(TreeVerdict::merged), "merged");
  EXPECT_STREQ(to_string(TreeVerdict::merge_failed), "merge_failed");
}
