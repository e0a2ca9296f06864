// The daemon's start classifies the loops from the store's summary index, not from the decoded
// records: on a real store holding a loop for every case recovery distinguishes, the recovery
// plan and the tree costs made from the summaries are those made from the full records.
#include <gtest/gtest.h>

#include <loopr/engine/cost_ledger.hpp>
#include <loopr/store/task_store.hpp>

#include "manager/tree_fixture.hpp"
#include "manager/tree_rules.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {

// One loop per case of recovery_plan_test.cpp (each in a tree of its own), each carrying what
// a summary leaves out: progress, feedback and other run marks, marks of a newer loopr.
std::vector<Loop> every_case() {
  std::vector<Loop> out;
  auto add = [&out](Loop l) {
    l.progress = "what earlier iterations said " + l.id;
    l.run.feedback.push_back({1, FeedbackSource::validation, "failed", "the output of " + l.id});
    l.run.head = std::string(40, 'c');
    l.run.no_progress = 1;
    l.unknown_marks = {{"a_newer_mark", 1}};
    l.usage.cost_usd = 0.5 + static_cast<double>(out.size()) / 8;
    out.push_back(std::move(l));
  };
  add(loop("001-001", LoopStatus::running));
  add(loop("001-002", LoopStatus::rebasing));
  add(loop("code-001-001-001", LoopStatus::pending));
  Loop unmerged = finished("002-001");
  unmerged.tree.merged_iteration.reset();
  add(unmerged);
  Loop unspawned = finished("002-002", 3);
  unspawned.tree.spawned_iteration = 2;
  add(unspawned);
  Loop with_worktree = finished("code-002-001-001");
  with_worktree.worktree = "/repo/.loopr/worktrees/code-002-001-001";
  add(with_worktree);
  add(finished("code-002-001-002"));
  add(finished("003"));  // a plan whose tree is not marked complete
  Loop unmerged_plan = finished("004");
  unmerged_plan.tree.tree_complete = true;
  add(unmerged_plan);
  Loop merged_plan = unmerged_plan;
  merged_plan.id = merged_plan.plan_id = "005";
  merged_plan.tree.merged_into_base = std::string(40, 'd');
  add(merged_plan);
  Loop refused_plan = unmerged_plan;
  refused_plan.id = refused_plan.plan_id = "006";
  refused_plan.tree.merge_error = "uncommitted changes";
  add(refused_plan);
  add(loop("code-007-001-001", LoopStatus::failed));
  Loop handled = loop("code-007-001-002", LoopStatus::failed);
  handled.tree.rolled_up = true;
  add(handled);
  Loop rejected = loop("008", LoopStatus::failed);
  rejected.tree.user_rejected = true;
  add(rejected);
  Loop dry = loop("009", LoopStatus::awaiting_approval);
  dry.tree.dry_run = true;
  add(dry);
  add(loop("010", LoopStatus::awaiting_approval));
  Loop old = loop("011-001", LoopStatus::invalidated);
  old.tree.invalidated_worktree = "/repo/.loopr/worktrees/011-001";
  add(old);
  add(loop("011-002", LoopStatus::invalidated));
  add(loop("012-001", LoopStatus::paused));
  add(loop("012-002", LoopStatus::blocked));
  add(loop("012-003", LoopStatus::stopped));
  add(loop("012-004", LoopStatus::awaiting_answer));
  return out;
}

std::vector<std::string> ids_of(const std::vector<Loop>& loops) {
  std::vector<std::string> ids;
  for (const Loop& l : loops) ids.push_back(l.id);
  return ids;
}

}  // namespace

TEST(RecoveryFromSummariesTest, TheSummaryIndexGivesTheRecoveryTheRecordsGive) {
  loopr::testing::TempDir dir;
  const std::string path = (dir / "state").string();
  {
    auto store = TaskStore::open(path);
    ASSERT_TRUE(store.ok()) << store.error().message;
    WriteSet set;
    set.creates = every_case();
    ASSERT_TRUE((*store)->apply(std::move(set)).ok());
  }
  auto store = TaskStore::open(path);  // reopened: the summaries come from the index on disk
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto summaries = (*store)->list_loop_summaries();
  auto records = (*store)->list_loops();
  ASSERT_TRUE(summaries.ok() && records.ok());
  ASSERT_EQ(ids_of(*summaries), ids_of(*records));
  for (const Loop& s : *summaries) EXPECT_TRUE(s.progress.empty() && s.run == RunMarks{});

  for (MergeMode mode : {MergeMode::automatic, MergeMode::manual}) {
    RecoveryPlan from_summaries = plan_recovery(*summaries, mode);
    RecoveryPlan from_records = plan_recovery(*records, mode);
    EXPECT_EQ(from_summaries.run, from_records.run);
    EXPECT_EQ(from_summaries.finish, from_records.finish);
    EXPECT_EQ(from_summaries.archive, from_records.archive);
    EXPECT_EQ(from_summaries.may_have_folder, from_records.may_have_folder);
    EXPECT_EQ(ids_of(from_summaries.interrupted), ids_of(from_records.interrupted));
    // What clearing their git locks reads of them.
    for (std::size_t i = 0; i < from_records.interrupted.size(); ++i) {
      EXPECT_EQ(from_summaries.interrupted[i].branch, from_records.interrupted[i].branch);
      EXPECT_EQ(from_summaries.interrupted[i].plan_id, from_records.interrupted[i].plan_id);
    }
    // Every case is there: the store held something for each branch of plan_recovery.
    EXPECT_EQ(from_records.run.size(), 3u);
    EXPECT_FALSE(from_records.finish.empty());
    EXPECT_EQ(from_records.archive, std::vector<std::string>{"011-001"});
  }
  engine::CostLedger from_summaries, from_records;
  from_summaries.reset(*summaries);
  from_records.reset(*records);
  for (const Loop& l : *records)
    EXPECT_EQ(from_summaries.total(l.plan_id), from_records.total(l.plan_id)) << l.plan_id;
}
