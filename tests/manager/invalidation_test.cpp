// A parent that iterates again after it had children: its descendants are invalidated in the same
// write as its own new state, their artifacts and branches kept, their worktrees archived.
#include <gtest/gtest.h>

#include "manager/tree_fixture.hpp"
#include "manager/tree_rules.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {

std::vector<Loop> tree_with_worktrees() {
  auto tree = finished_tree();
  find(tree, "001").tree.tree_complete = true;
  find(tree, "001").tree.merge_error = "conflict";
  tree.push_back(loop("001-002", LoopStatus::running));
  find(tree, "001-002").worktree = "/repo/.loopr/worktrees/001-002";
  find(tree, "001-002").branch = "loopr/001-loops/001-002";
  return tree;
}

const Loop* updated(const Invalidation& inv, const std::string& id) {
  for (const Loop& l : inv.updates)
    if (l.id == id) return &l;
  return nullptr;
}

}  // namespace

TEST(InvalidationTest, EveryDescendantIsInvalidatedInTheSameWriteAsTheParent) {
  auto inv =
      invalidate_descendants("001", tree_with_worktrees(), "Split spec 2", LoopStatus::running);
  ASSERT_TRUE(inv.ok()) << inv.error().message;
  ASSERT_EQ(inv->updates.size(), 5u);
  for (const char* id : {"001-001", "001-001-001", "code-001-001-001", "001-002"}) {
    const Loop* l = updated(*inv, id);
    ASSERT_NE(l, nullptr) << id;
    EXPECT_EQ(l->status, LoopStatus::invalidated) << id;
    EXPECT_EQ(l->status_reason, "invalidated: 001 iterates again");
  }
  EXPECT_EQ(updated(*inv, "001")->status, LoopStatus::running);
}

TEST(InvalidationTest, WorktreesAreToBeArchivedBranchesAndArtifactsKept) {
  auto inv = invalidate_descendants("001", tree_with_worktrees(), "again", LoopStatus::running);
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ(inv->to_archive, std::vector<std::string>{"001-002"});
  const Loop* spec = updated(*inv, "001-002");
  EXPECT_TRUE(spec->worktree.empty());
  EXPECT_EQ(spec->tree.invalidated_worktree, "/repo/.loopr/worktrees/001-002");
  EXPECT_EQ(spec->branch, "loopr/001-loops/001-002");
  EXPECT_EQ(updated(*inv, "001-001")->output_artifacts,
            std::vector<std::string>{".loopr/x/001-001.md"});
}

TEST(InvalidationTest, TheParentsNextGenerationStartsAfterEveryIndexUsed) {
  auto tree = tree_with_worktrees();
  Loop old = loop("001-005", LoopStatus::invalidated);  // an earlier generation's child
  old.index = 5;
  tree.push_back(old);
  find(tree, "001-002").index = 2;
  auto inv = invalidate_descendants("001", tree, "again", LoopStatus::running);
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ(updated(*inv, "001")->tree.children_base, 5);
  EXPECT_EQ(updated(*inv, "001-005"), nullptr) << "already invalidated: not written again";
}

TEST(InvalidationTest, TheParentForgetsTheOldGenerationAndCarriesTheFeedback) {
  auto inv = invalidate_descendants("001", tree_with_worktrees(), "Split spec 2\ninto two",
                                    LoopStatus::running);
  ASSERT_TRUE(inv.ok());
  const Loop* plan = updated(*inv, "001");
  EXPECT_FALSE(plan->tree.spawned_iteration.has_value());
  EXPECT_FALSE(plan->tree.tree_complete);
  EXPECT_TRUE(plan->tree.merge_error.empty());
  EXPECT_EQ(plan->tree.merged_iteration, 1) << "its own merge stays";
  ASSERT_EQ(plan->run.feedback.size(), 1u);
  EXPECT_EQ(plan->run.feedback[0].source, FeedbackSource::user);
  EXPECT_EQ(plan->run.feedback[0].summary, "Split spec 2");
  ASSERT_TRUE(inv->approval.has_value()) << "a plan's iterate is a gate decision";
  EXPECT_EQ(inv->approval->decision, "iterate");
  bool approval_event = false;
  for (const Event& e : inv->events) approval_event = approval_event || e.type == "approval";
  EXPECT_TRUE(approval_event);
}

TEST(InvalidationTest, OnlyTheParentsOwnSubtreeIsTouched) {
  auto tree = tree_with_worktrees();
  auto inv = invalidate_descendants("001-001", tree, "again", LoopStatus::running);
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ(inv->updates.size(), 3u);  // 001-001, its phase and code loop
  EXPECT_EQ(updated(*inv, "001-002"), nullptr);
  EXPECT_EQ(updated(*inv, "001"), nullptr);
  EXPECT_TRUE(!inv->approval.has_value()) << "only plans are decided at the gate";
}

TEST(InvalidationTest, AParentThatCannotMoveToTheNextStatusRefusesAndWritesNothing) {
  auto tree = tree_with_worktrees();
  find(tree, "001").status = LoopStatus::invalidated;
  auto inv = invalidate_descendants("001", tree, "again", LoopStatus::running);
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.error().code, ErrorCode::illegal_transition);
  EXPECT_EQ(invalidate_descendants("009", tree, "x", LoopStatus::running).error().code,
            ErrorCode::not_found);
}

TEST(SubtreeTest, ALoopIsInItsOwnSubtreeAndSoAreItsDescendantsAndCodeLoop) {
  EXPECT_TRUE(in_subtree("001", "001"));
  EXPECT_TRUE(in_subtree("001-002-003", "001"));
  EXPECT_TRUE(in_subtree("code-001-002-003", "001-002-003"));
  EXPECT_FALSE(in_subtree("0010", "001"));
  EXPECT_FALSE(in_subtree("001-002", "001-002-003"));
  EXPECT_EQ(join({"a.txt", "b.txt"}, ", "), "a.txt, b.txt");
}

namespace {

// code-001-001-001 failed for good; its failure rolled up to its phase, spec and plan.
std::vector<Loop> rolled_up_tree() {
  auto tree = finished_tree();
  for (const char* id : {"001", "001-001", "001-001-001", "code-001-001-001"}) {
    find(tree, id).status = LoopStatus::failed;
    find(tree, id).tree.rolled_up = true;
  }
  return tree;
}

}  // namespace

TEST(RestoreAncestorsTest, AncestorsAFailureRolledUpToAreCompleteAgainWhenItIterates) {
  auto tree = rolled_up_tree();
  std::vector<Event> events;
  auto restored = restore_ancestors("001-001-001", tree, events);
  ASSERT_EQ(restored.size(), 2u);
  EXPECT_EQ(restored[0].id, "001-001");
  EXPECT_EQ(restored[1].id, "001");
  for (const Loop& l : restored) {
    EXPECT_EQ(l.status, LoopStatus::complete) << l.id;
    EXPECT_FALSE(l.tree.rolled_up) << l.id;
    EXPECT_EQ(l.status_reason, "restored: 001-001-001 iterates again");
  }
  EXPECT_EQ(events.size(), 2u);
  // Iterating the code loop itself restores all three.
  events.clear();
  EXPECT_EQ(restore_ancestors("code-001-001-001", tree, events).size(), 3u);
}

TEST(RestoreAncestorsTest, AnAncestorAnotherFailureStillHoldsDownStaysFailed) {
  auto tree = rolled_up_tree();
  // A second phase failed on its own under the same spec.
  Loop other = finished("001-001-002");
  other.status = LoopStatus::failed;
  other.tree.rolled_up = true;
  tree.push_back(other);
  std::vector<Event> events;
  auto restored = restore_ancestors("001-001-001", tree, events);
  EXPECT_TRUE(restored.empty()) << "the spec and the plan still have 001-001-002 failed below them";
}

TEST(RestoreAncestorsTest, AnAncestorThatFailedOnItsOwnOrIsOwedAStepIsLeftToThePerson) {
  auto tree = rolled_up_tree();
  find(tree, "001-001").tree.rolled_up = false;      // the spec failed on its own
  find(tree, "001").tree.spawned_iteration.reset();  // the plan never spawned its children
  std::vector<Event> events;
  EXPECT_TRUE(restore_ancestors("001-001-001", tree, events).empty());
}
