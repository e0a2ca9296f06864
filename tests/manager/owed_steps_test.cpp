// What a tree still owes, as data (manager/owed_steps.hpp, issue 44 R4): one list the recovery
// and the tree's check read, asserted here step by step along a tree's end, the way the fault
// suite (tests/faults/tree_end_faults_test.cpp) asserts it of a daemon killed at each step.
#include <gtest/gtest.h>

#include <ostream>

#include "manager/tree_fixture.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {
// How a failed comparison shows a step: `001: check_gate`.
void PrintTo(const OwedStep& o, std::ostream* os) { *os << o.loop_id << ": " << to_string(o.step); }
}  // namespace loopr::manager

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {

constexpr MergeMode kAuto = MergeMode::automatic;

std::vector<OwedStep> owed(const std::vector<Loop>& tree, MergeMode mode = kAuto) {
  return owed_steps(tree, mode);
}

}  // namespace

TEST(OwedStepsTest, ALastLoopStoredCompleteOwesItsMergeAndItsFolderAndTheTreeWaits) {
  auto tree = finished_tree();
  Loop& code = find(tree, "code-001-001-001");
  code.tree.merged_iteration.reset();
  code.worktree = "/repo/.loopr/worktrees/code-001-001-001";
  EXPECT_EQ(owed(tree), (std::vector<OwedStep>{
                            {"code-001-001-001", Owed::merge_into_integration},
                            {"code-001-001-001", Owed::retire_folder},
                        }))
      << "the gate waits for the last merge";
}

TEST(OwedStepsTest, EveryLoopFinishedThePlanOwesTheGateThenTheMergeIntoTheBase) {
  auto tree = finished_tree();
  EXPECT_EQ(owed(tree), (std::vector<OwedStep>{{"001", Owed::check_gate}}));
  find(tree, "001").tree.gate_result = GateResult::checking;  // killed during the check
  EXPECT_EQ(owed(tree), (std::vector<OwedStep>{{"001", Owed::check_gate}}));
  find(tree, "001").tree.tree_complete = true;
  EXPECT_EQ(owed(tree), (std::vector<OwedStep>{{"001", Owed::merge_into_base}}));
  EXPECT_TRUE(owed(tree, MergeMode::manual).empty()) << "`loopr merge` is the person's";
  EXPECT_TRUE(owed(tree, MergeMode::pr).empty()) << "the pull request's steps are CI's";
  find(tree, "001").tree.merged_into_base = std::string(40, 'c');
  EXPECT_TRUE(owed(tree).empty()) << "a merged tree owes nothing";
}

TEST(OwedStepsTest, ARefusedMergeWaitsForAPerson) {
  auto tree = finished_tree();
  find(tree, "001").tree.tree_complete = true;
  find(tree, "001").tree.merge_error = "held files: .loopr/config.yml";
  EXPECT_TRUE(owed(tree).empty());
}

TEST(OwedStepsTest, AnApprovedPlanOwesItsMergeItsChildrenAndItsFolderInThatOrder) {
  std::vector<Loop> tree = {loop("001", LoopStatus::complete)};
  tree[0].worktree = "/repo/.loopr/worktrees/001";
  EXPECT_EQ(owed(tree), (std::vector<OwedStep>{{"001", Owed::merge_into_integration},
                                               {"001", Owed::spawn_children},
                                               {"001", Owed::retire_folder}}));
}

TEST(OwedStepsTest, RunsFailuresDryRunsAndOldWorktreesAreOwedTheirOwnSteps) {
  Loop failed = loop("code-001-001-001", LoopStatus::failed);
  Loop handled = loop("code-001-001-002", LoopStatus::failed);
  handled.tree.rolled_up = true;
  Loop dry = loop("002", LoopStatus::awaiting_approval);
  dry.tree.dry_run = true;
  Loop old = loop("003-001", LoopStatus::invalidated);
  old.tree.invalidated_worktree = "/repo/.loopr/worktrees/003-001";
  std::vector<Loop> loops = {loop("001-001", LoopStatus::running),
                             failed,
                             handled,
                             dry,
                             old,
                             loop("004", LoopStatus::awaiting_approval),
                             loop("005-001", LoopStatus::paused)};
  EXPECT_EQ(owed(loops), (std::vector<OwedStep>{{"001-001", Owed::run},
                                                {"code-001-001-001", Owed::handle_failure},
                                                {"002", Owed::end_dry_run},
                                                {"003-001", Owed::archive_folder}}))
      << "a handled failure, an approval and a paused loop wait for a person";
}

TEST(OwedStepsTest, EachPlanOfTheStoreIsJudgedByItsOwnTree) {
  auto tree = finished_tree();
  std::vector<Loop> other = {finished("002"), loop("002-001", LoopStatus::running)};
  tree.insert(tree.end(), other.begin(), other.end());
  EXPECT_EQ(owed(tree), (std::vector<OwedStep>{{"001", Owed::check_gate}, {"002-001", Owed::run}}))
      << "002's running spec does not hold 001's gate, and 002's gate waits for it";
}

TEST(OwedStepsTest, AnInvalidatedGenerationDoesNotHoldTheTree) {
  auto tree = finished_tree();
  tree.push_back(loop("001-002", LoopStatus::invalidated));
  EXPECT_EQ(owed(tree), (std::vector<OwedStep>{{"001", Owed::check_gate}}));
}

TEST(OwedStepsTest, TheStepsNameThemselvesForMessagesAndTests) {
  EXPECT_STREQ(to_string(Owed::merge_into_base), "merge_into_base");
  EXPECT_STREQ(to_string(Owed::check_gate), "check_gate");
}
