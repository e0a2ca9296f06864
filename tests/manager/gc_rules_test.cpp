// Which trees and loops `loopr gc` may clean, and how its findings change the loop records:
// pure, in memory.
#include <gtest/gtest.h>

#include <loopr/manager/gc.hpp>

#include "manager/tree_fixture.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {

constexpr TimestampMs kDay = 24 * 3'600'000LL;

GcOptions at(TimestampMs now, Duration older_than = std::chrono::hours(24 * 7)) {
  GcOptions o;
  o.now = now;
  o.older_than = older_than;
  return o;
}

std::vector<Loop> changed_at(std::vector<Loop> tree, TimestampMs t) {
  for (Loop& l : tree) l.updated_at = t;
  return tree;
}

std::vector<Loop> merged_tree(TimestampMs t) {
  auto tree = changed_at(finished_tree(), t);
  tree[0].tree.tree_complete = true;
  tree[0].tree.merged_into_base = std::string(40, 'b');
  return tree;
}

}  // namespace

TEST(GcRulesTest, AMergedTreeQualifiesOnceItEndedLongEnoughAgo) {
  auto tree = merged_tree(10 * kDay);
  EXPECT_TRUE(gc_targets(tree, at(12 * kDay), MergeMode::automatic, "main").empty())
      << "ended two days ago, gc.older_than is seven";
  auto targets = gc_targets(tree, at(20 * kDay), MergeMode::automatic, "main");
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].plan_id, "001");
  EXPECT_TRUE(targets[0].ended);
  EXPECT_EQ(targets[0].loops.size(), 4u);
  EXPECT_EQ(targets[0].base_branch, "main");
  tree[0].tree.base_branch = "develop";
  EXPECT_EQ(gc_targets(tree, at(20 * kDay), MergeMode::automatic, "main")[0].base_branch, "develop")
      << "the branch the tree was merged into, as stored at submit";
}

TEST(GcRulesTest, FailedRejectedStoppedAndManuallyCompleteTreesQualify) {
  Loop rejected = loop("001", LoopStatus::failed);
  rejected.tree.user_rejected = true;
  Loop stopped = loop("002", LoopStatus::stopped);
  Loop manual = finished("003");  // complete, waiting for `loopr merge`
  manual.tree.tree_complete = true;
  std::vector<Loop> all = {rejected, stopped, manual};
  all = changed_at(all, 0);
  auto targets = gc_targets(all, at(30 * kDay), MergeMode::manual, "main");
  ASSERT_EQ(targets.size(), 3u);
  for (const auto& t : targets) EXPECT_TRUE(t.ended) << t.plan_id;
}

TEST(GcRulesTest, TreesThatRunOrWaitForAPersonAreLeftAlone) {
  std::vector<std::vector<Loop>> trees = {
      {loop("001", LoopStatus::awaiting_approval)},
      {finished("001"), loop("001-001", LoopStatus::running)},
      {finished("001"), loop("001-001", LoopStatus::paused)},
      {finished("001"), loop("001-001", LoopStatus::awaiting_answer)},
      {finished("001"), loop("001-001", LoopStatus::blocked)},
      {finished("001"), loop("001-001", LoopStatus::failed)},  // its failure not handled yet
  };
  for (auto& tree : trees) {
    tree = changed_at(tree, 0);
    EXPECT_TRUE(gc_targets(tree, at(100 * kDay), MergeMode::automatic, "main").empty())
        << to_string(tree.back().status);
  }
  // A gate-blocked plan waits for a person too.
  auto blocked = changed_at(finished_tree(), 0);
  blocked[0].status = LoopStatus::blocked;
  blocked[0].tree.gate_result = GateResult::failed;
  EXPECT_TRUE(gc_targets(blocked, at(100 * kDay), MergeMode::automatic, "main").empty());
}

TEST(GcRulesTest, InvalidatedLoopsOfARunningTreeQualifyAlone) {
  std::vector<Loop> tree = {loop("001", LoopStatus::running),
                            loop("001-001", LoopStatus::invalidated),
                            loop("001-002", LoopStatus::invalidated), loop("001-003")};
  tree = changed_at(tree, 50 * kDay);
  tree[1].updated_at = 1 * kDay;  // invalidated long ago
  auto targets = gc_targets(tree, at(51 * kDay), MergeMode::automatic, "main");
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_FALSE(targets[0].ended);
  ASSERT_EQ(targets[0].loops.size(), 1u);
  EXPECT_EQ(targets[0].loops[0].id, "001-001");
}

TEST(GcRulesTest, ALoopWithoutItsPlanRecordIsNotTouched) {
  std::vector<Loop> orphans =
      changed_at({finished("001-001"), loop("001-002", LoopStatus::invalidated)}, 0);
  EXPECT_TRUE(gc_targets(orphans, at(100 * kDay), MergeMode::automatic, "main").empty());
}

TEST(GcRulesTest, ChangesGoToEndedLoopsOnlyWithoutTouchingTheirTimes) {
  auto tree = merged_tree(5 * kDay);
  tree.push_back(loop("001-002", LoopStatus::running));
  GcReport report;
  report.items.push_back({api::GcKind::worktree, ".loopr/worktrees/code-001-001-001",
                          api::GcAction::archived, "loopr/archive/code-001-001-001", 4096,
                          "code-001-001-001", "ended"});
  report.changes.push_back({"code-001-001-001", "", "loopr/archive/code-001-001-001"});
  report.changes.push_back({"001-002", "", ""});  // resumed while gc ran
  report.bytes_freed = 4096;
  WriteSet w;
  std::vector<std::string> errors;
  apply_gc_changes(tree, "001", report, w, errors);
  ASSERT_EQ(w.updates.size(), 1u);
  EXPECT_EQ(w.updates[0].id, "code-001-001-001");
  EXPECT_EQ(w.updates[0].worktree, "");
  EXPECT_EQ(w.updates[0].branch, "loopr/archive/code-001-001-001");
  EXPECT_FALSE(w.touch) << "gc's bookkeeping is not the loop's own change";
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("001-002"), std::string::npos);
  ASSERT_EQ(w.events.size(), 1u);
  EXPECT_EQ(w.events[0].type, "gc");
  EXPECT_EQ(w.events[0].loop_id, "001");
  EXPECT_EQ(w.events[0].data["bytes_freed"], 4096);
}

TEST(GcRulesTest, TheReportSaysWhatWentAndCountsIt) {
  GcReport r;
  r.dry_run = true;
  r.items.push_back(
      {api::GcKind::worktree, "w", api::GcAction::archived, "loopr/archive/x", 10, "x", "ended"});
  r.items.push_back(
      {api::GcKind::branch, "loopr/001-loops/x", api::GcAction::deleted, "", 0, "x", "merged"});
  r.items.push_back({api::GcKind::branch, "loopr/001-loops/y", api::GcAction::archived,
                     "loopr/archive/y", 0, "y", "no"});
  r.items.push_back(
      {api::GcKind::logs, ".loopr/logs/loops/x", api::GcAction::removed, "", 300, "x", "ended"});
  r.items.push_back(
      {api::GcKind::logs, ".loopr/logs/loops/y", api::GcAction::removed, "", 200, "y", "ended"});
  r.bytes_freed = 10;
  nlohmann::json j = to_json(r);
  EXPECT_EQ(j["dry_run"], true);
  EXPECT_EQ(j["removed"].size(), 5u);
  EXPECT_EQ(j["logs"], 2);
  EXPECT_EQ(j["logs_bytes"], 500);
  EXPECT_EQ(j["removed"][0]["kept_on"], "loopr/archive/x");
  EXPECT_FALSE(j["removed"][1].contains("kept_on"));
  EXPECT_EQ(j["worktrees"], 1);
  EXPECT_EQ(j["branches_deleted"], 1);
  EXPECT_EQ(j["branches_archived"], 1);
  EXPECT_EQ(j["bytes_freed"], 10);
}
