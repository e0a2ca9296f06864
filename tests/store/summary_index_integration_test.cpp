// The store's summary index (schema 2) against a real RocksDB: a store an earlier loopr wrote
// (schema 1, no index) opens and gets its index; the index always says what the records say.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <memory>
#include <string>
#include <vector>

#include <loopr/core/ids.hpp>
#include <loopr/store/store_writes.hpp>
#include <loopr/store/task_store.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using loopr::testing::TempDir;

namespace {

// The column families every loopr store has; "default" is where schema 2 keeps the index.
const std::vector<std::string> kFamilies = {
    rocksdb::kDefaultColumnFamilyName, "loops", "iterations", "events", "approvals", "meta"};

// The raw database, as an earlier loopr (or a test looking underneath) opens it.
struct RawDb {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> cf;

  explicit RawDb(const std::string& dir) {
    rocksdb::DBOptions o;
    o.create_if_missing = true;
    o.create_missing_column_families = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const auto& name : kFamilies) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(o, dir, families, &cf, &raw);
    EXPECT_TRUE(s.ok()) << s.ToString();
    db.reset(raw);
  }
  ~RawDb() {
    for (auto* h : cf) db->DestroyColumnFamilyHandle(h);
    db->Close();
  }
  void put(int family, const std::string& key, const std::string& value) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    ASSERT_TRUE(db->Put(wo, cf[static_cast<std::size_t>(family)], key, value).ok());
  }
  std::string get(int family, const std::string& key) {
    std::string v;
    db->Get(rocksdb::ReadOptions(), cf[static_cast<std::size_t>(family)], key, &v);
    return v;
  }
  std::size_t count(int family) {
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), cf[static_cast<std::size_t>(family)]));
    std::size_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    return n;
  }
};
constexpr int kDefault = 0, kLoops = 1, kMeta = 5;

// Loops with everything a record carries: progress, feedback, marks of both kinds, marks of a
// newer loopr, usage; in several statuses.
std::vector<Loop> varied_loops() {
  std::vector<Loop> out;
  const LoopStatus statuses[] = {LoopStatus::complete, LoopStatus::running, LoopStatus::failed,
                                 LoopStatus::invalidated, LoopStatus::stopped};
  for (int p = 1; p <= 3; ++p) {
    const std::string plan = plan_id(p);
    for (int i = 0; i < 5; ++i) {
      Loop l;
      l.id = i == 0 ? plan : child_id(plan, LoopType::spec, i);
      l.type = i == 0 ? LoopType::plan : LoopType::spec;
      l.parent_id = i == 0 ? "" : plan;
      l.plan_id = plan;
      l.index = i;
      l.task = "task \"" + l.id + "\"\nwith a second line";
      l.output_artifacts = {".loopr/specs/" + l.id + ".md"};
      l.max_iterations = 5;
      l.worktree = "/repo/.loopr/worktrees/" + l.id;
      l.branch = "loopr/" + plan + "/" + l.id;
      l.iteration = 2;
      l.status = statuses[i];
      l.status_reason = "why " + std::to_string(i);
      l.end_reason = i == 4 ? EndReason::daemon_stopped : EndReason::none;
      l.progress = std::string(3000, 'p');
      l.tree.merged_iteration = 2;
      l.tree.spawned_iteration = i == 0 ? std::optional<int>(1) : std::nullopt;
      l.tree.rolled_up = i == 2 && p == 2;
      l.tree.invalidated_worktree = i == 3 ? "/repo/.loopr/worktrees/old" : "";
      l.tree.gate_result = i == 0 ? GateResult::passed : GateResult::none;
      l.tree.budget.max_cost_usd = i == 0 ? 2.5 : 0;
      l.run.feedback.push_back({1, FeedbackSource::validation, "failed", std::string(900, 'f')});
      l.run.head = std::string(40, 'c');
      l.run.question = "which one?";
      l.unknown_marks = {{"a_newer_mark", {{"nested", true}}}};
      l.usage = Usage{1000 * p, 100 * i, 7, 3, 0.125 * p + 0.01 * i};
      l.created_at = 1795000000000 + p;
      l.updated_at = 1795000001000 + i;
      l.version = static_cast<std::uint64_t>(3 + i);
      out.push_back(std::move(l));
    }
  }
  return out;
}

// Every summary is the record's loop_summary(), field for field (the store's JSON of both), and
// the counts by status are the records'.
void expect_index_matches_records(const TaskStore& store) {
  auto counts = store.count_by_status();  // before any listing on a fresh open: read from disk
  auto full = store.list_loops();
  auto summaries = store.list_loop_summaries();
  ASSERT_TRUE(counts.ok() && full.ok() && summaries.ok());
  ASSERT_EQ(summaries->size(), full->size());
  std::map<LoopStatus, std::size_t> expected;
  for (std::size_t i = 0; i < full->size(); ++i) {
    EXPECT_EQ(to_store_json((*summaries)[i]), to_store_json(loop_summary((*full)[i])))
        << (*full)[i].id;
    ++expected[(*full)[i].status];
  }
  EXPECT_EQ(*counts, expected);
}

}  // namespace

TEST(StoreSummaryIndexTest, AStoreOfAnEarlierLooprGetsItsIndexAtItsFirstOpen) {
  TempDir dir;
  const std::string path = (dir / "state").string();
  const std::vector<Loop> loops = varied_loops();
  {
    // Written the way loopr wrote stores before the index: records and schema 1, nothing else.
    RawDb old(path);
    for (const Loop& l : loops) old.put(kLoops, l.id, to_store_json(l).dump());
    old.put(kMeta, "schema_version", "1");
  }
  {
    auto store = TaskStore::open(path);
    ASSERT_TRUE(store.ok()) << store.error().message;
    expect_index_matches_records(**store);
    ASSERT_EQ((*store)->list_loops()->size(), loops.size());
    // The records themselves are untouched (progress, feedback, newer marks).
    auto record = (*store)->get_loop("002-001");
    ASSERT_TRUE(record.ok());
    EXPECT_EQ(to_store_json(*record), to_store_json(loops[6]));
  }
  {
    RawDb after(path);
    EXPECT_EQ(after.get(kMeta, "schema_version"), std::to_string(TaskStore::kSchemaVersion));
    EXPECT_EQ(after.count(kDefault), loops.size());
  }
  // Opened again: the index is read, and writes keep it.
  auto store = TaskStore::open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  expect_index_matches_records(**store);
  Loop changed = *(*store)->get_loop("003");
  changed.status_reason = "changed after the upgrade";
  ASSERT_TRUE(update_loop(*(*store), changed).ok());
  expect_index_matches_records(**store);
}

TEST(StoreSummaryIndexTest, AnUnreadableRecordOfAnEarlierStoreIsNamed) {
  TempDir dir;
  const std::string path = (dir / "state").string();
  {
    RawDb old(path);
    old.put(kLoops, "001", "{not json");
    old.put(kMeta, "schema_version", "1");
  }
  auto store = TaskStore::open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("loop record 001"), std::string::npos)
      << store.error().message;
}

TEST(StoreSummaryIndexTest, EveryWriteKeepsTheIndexAcrossReopens) {
  TempDir dir;
  const std::string path = (dir / "state").string();
  std::vector<Loop> loops = varied_loops();
  {
    auto store = TaskStore::open(path);
    ASSERT_TRUE(store.ok());
    WriteSet set;
    set.creates = loops;
    ASSERT_TRUE((*store)->apply(std::move(set)).ok());
  }
  {
    // Reopened: the index is read before any listing, then every kind of write follows it.
    auto store = TaskStore::open(path);
    ASSERT_TRUE(store.ok());
    expect_index_matches_records(**store);
    Loop l = *(*store)->get_loop("001-001");
    l.iteration += 1;
    ASSERT_TRUE(l.transition_to(LoopStatus::complete).ok());
    IterationRecord rec;
    rec.loop_id = l.id;
    rec.n = l.iteration;
    ASSERT_TRUE(commit_iteration(*(*store), l, rec).ok());
    Loop fresh;
    fresh.id = "004";
    fresh.plan_id = "004";
    ASSERT_TRUE(create_loop(*(*store), fresh).ok());
    expect_index_matches_records(**store);
  }
  {
    // A write made before any listing in this process reaches the index too.
    auto store = TaskStore::open(path);
    ASSERT_TRUE(store.ok());
    Loop l = *(*store)->get_loop("002");
    l.worktree.clear();
    ASSERT_TRUE(update_loop(*(*store), l).ok());
  }
  auto store = TaskStore::open(path);
  ASSERT_TRUE(store.ok());
  expect_index_matches_records(**store);
  EXPECT_EQ((*store)->list_loop_summaries()->size(), loops.size() + 1);
}
