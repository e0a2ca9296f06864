// What a starting daemon does with the records a crash left: one case per moment the daemon can
// be killed at (the header of src/manager/recovery.cpp, the fault suite's random SIGKILLs).
#include <gtest/gtest.h>

#include <algorithm>

#include "manager/tree_fixture.hpp"
#include "manager/tree_rules.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {

bool has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

RecoveryPlan plan_of(std::vector<Loop> loops, MergeMode mode = MergeMode::automatic) {
  return plan_recovery(loops, mode);
}

// A plan whose whole tree is finished and marked complete.
std::vector<Loop> complete_tree() {
  auto tree = finished_tree();
  find(tree, "001").tree.tree_complete = true;
  return tree;
}

}  // namespace

TEST(RecoveryPlanTest, KilledWhileIteratingRebasingOrWaitingTheLoopRunsAgain) {
  auto p = plan_of({loop("001-001", LoopStatus::running), loop("001-002", LoopStatus::rebasing),
                    loop("code-001-001-001", LoopStatus::pending)});
  EXPECT_EQ(p.run, (std::vector<std::string>{"001-001", "001-002", "code-001-001-001"}));
  EXPECT_TRUE(p.finish.empty());
  EXPECT_EQ(p.interrupted.size(), 3u) << "their git locks may be stale";
}

TEST(RecoveryPlanTest, KilledAfterCompletingBeforeTheMergeIntoTheIntegrationBranch) {
  Loop spec = finished("001-001");
  spec.tree.merged_iteration.reset();
  auto p = plan_of({spec});
  EXPECT_TRUE(has(p.finish, "001-001"));
  EXPECT_TRUE(p.run.empty());
}

TEST(RecoveryPlanTest, KilledAfterTheMergeBeforeTheChildrenWereCreated) {
  Loop spec = finished("001-001", 3);
  spec.tree.spawned_iteration = 2;  // children of the iteration before
  auto p = plan_of({spec});
  EXPECT_TRUE(has(p.finish, "001-001"));
}

TEST(RecoveryPlanTest, KilledBeforeTheFinishedLoopsWorktreeWasRemoved) {
  Loop code = finished("code-001-001-001");
  code.worktree = "/repo/.loopr/worktrees/code-001-001-001";
  EXPECT_TRUE(has(plan_of({code}).finish, "code-001-001-001"));
  code.worktree.clear();
  EXPECT_TRUE(plan_of({code}).finish.empty()) << "a finished code loop is owed nothing";
}

TEST(RecoveryPlanTest, KilledBeforeTheTreeWasMarkedComplete) {
  auto p = plan_of(finished_tree());
  EXPECT_EQ(p.finish, std::vector<std::string>{"001"})
      << "only the plan: its finish checks the tree";
}

TEST(RecoveryPlanTest, TreeCompleteStoredButTheMergeIntoTheBaseBranchNot) {
  // Found by the fault suite (08435a5): killed between the two writes, the tree never reached
  // main. With merge: auto the plan is finished again; the merge made again is up to date.
  auto p = plan_of(complete_tree(), MergeMode::automatic);
  EXPECT_EQ(p.finish, std::vector<std::string>{"001"});
  EXPECT_TRUE(plan_of(complete_tree(), MergeMode::manual).finish.empty())
      << "manual: `loopr merge` does it";
}

TEST(RecoveryPlanTest, AMergedOrUnmergeableTreeIsLeftAlone) {
  auto merged = complete_tree();
  find(merged, "001").tree.merged_into_base = std::string(40, 'd');
  EXPECT_TRUE(plan_of(merged).finish.empty());
  auto refused = complete_tree();
  find(refused, "001").tree.merge_error =
      "uncommitted changes in your work tree would be overwritten";
  EXPECT_TRUE(plan_of(refused).finish.empty()) << "waits for a person and `loopr merge`";
}

TEST(RecoveryPlanTest, KilledBeforeAFailureWasHandledThePolicyRunsAtStart) {
  Loop code = loop("code-001-001-001", LoopStatus::failed);
  EXPECT_TRUE(has(plan_of({code}).finish, code.id)) << "retry or roll-up still owed";
  code.tree.rolled_up = true;
  EXPECT_TRUE(plan_of({code}).finish.empty());
  Loop rejected = loop("001", LoopStatus::failed);
  rejected.tree.user_rejected = true;
  EXPECT_TRUE(plan_of({rejected}).finish.empty()) << "a rejected plan has no failure policy";
}

TEST(RecoveryPlanTest, KilledWhileInvalidatingTheOldWorktreesAreArchived) {
  Loop old = loop("001-001", LoopStatus::invalidated);
  old.tree.invalidated_worktree = "/repo/.loopr/worktrees/001-001";
  Loop bare = loop("001-002", LoopStatus::invalidated);  // had no worktree
  auto p = plan_of({old, bare});
  EXPECT_EQ(p.archive, std::vector<std::string>{"001-001"});
  EXPECT_TRUE(p.run.empty());
  EXPECT_TRUE(p.finish.empty());
}

TEST(RecoveryPlanTest, LoopsWaitingForAPersonStayAsTheyAre) {
  auto p = plan_of({loop("001", LoopStatus::awaiting_approval), loop("002-001", LoopStatus::paused),
                    loop("003-001", LoopStatus::blocked), loop("004-001", LoopStatus::stopped)});
  EXPECT_TRUE(p.run.empty());
  EXPECT_TRUE(p.finish.empty());
  EXPECT_TRUE(p.archive.empty());
  EXPECT_TRUE(p.interrupted.empty());
}

TEST(RecoveryPlanTest, OnlyLoopsThatStillWorkMayKeepAWorktreeFolder) {
  Loop code = finished("code-001-001-001");
  auto p = plan_of({loop("001-001", LoopStatus::running), loop("001-002", LoopStatus::paused), code,
                    loop("001-003", LoopStatus::invalidated)});
  EXPECT_EQ(p.may_have_folder, (std::set<std::string>{"001-001", "001-002"}));
}
