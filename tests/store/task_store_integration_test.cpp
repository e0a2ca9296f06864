// TaskStore against a real RocksDB in a temp dir, and its contract also against the store in
// memory (StoreContract).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include <loopr/core/ids.hpp>
#include <loopr/store/store_writes.hpp>
#include <loopr/store/task_store.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using loopr::testing::TempDir;

namespace {

Loop make_loop(const std::string& id, LoopType type, const std::string& parent, int index) {
  Loop l;
  l.id = id;
  l.type = type;
  l.parent_id = parent;
  l.plan_id = root_plan_id(id);
  l.index = index;
  l.max_iterations = 5;
  return l;
}

std::unique_ptr<TaskStore> open_store(const TempDir& dir, StoreOptions o = {}) {
  auto s = TaskStore::open((dir / "state").string(), o);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? std::move(s).value() : nullptr;
}

// The contract both kinds of store keep (issue 44 R5: the engine's and the manager's fast tests
// run on the store in memory, so it must answer as RocksDB's does): each test runs on a real
// RocksDB in a temp dir and on TaskStore::in_memory().
enum class Tables { rocksdb, memory };

class StoreContract : public ::testing::TestWithParam<Tables> {
 protected:
  std::unique_ptr<TaskStore> open(StoreOptions o = {}) {
    return GetParam() == Tables::memory ? TaskStore::in_memory() : open_store(dir, o);
  }
  TempDir dir;
};

INSTANTIATE_TEST_SUITE_P(Tables, StoreContract, ::testing::Values(Tables::rocksdb, Tables::memory),
                         [](const ::testing::TestParamInfo<Tables>& info) {
                           return info.param == Tables::memory ? "memory" : "rocksdb";
                         });

}  // namespace

TEST_P(StoreContract, CreateGetAndRefuseDuplicates) {
  auto store = open();
  auto created = create_loop(*store, make_loop("001", LoopType::plan, "", 0));
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->version, 1u);
  EXPECT_GT(created->created_at, 0);
  auto got = store->get_loop("001");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(to_store_json(*got), to_store_json(*created));
  auto again = create_loop(*store, make_loop("001", LoopType::plan, "", 0));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::already_exists);
  auto missing = store->get_loop("002");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);
}

TEST_P(StoreContract, StaleUpdateIsRefusedNotLost) {
  auto store = open();
  Loop v1 = *create_loop(*store, make_loop("001", LoopType::plan, "", 0));
  Loop a = v1, b = v1;
  a.progress = "from writer a";
  auto a2 = update_loop(*store, a);
  ASSERT_TRUE(a2.ok());
  EXPECT_EQ(a2->version, 2u);
  b.progress = "from writer b";
  auto b2 = update_loop(*store, b);
  ASSERT_FALSE(b2.ok());
  EXPECT_EQ(b2.error().code, ErrorCode::conflict);
  EXPECT_EQ(store->get_loop("001")->progress, "from writer a");
  Loop fresh = *store->get_loop("001");
  fresh.progress = "b retried";
  ASSERT_TRUE(update_loop(*store, fresh).ok());
  EXPECT_EQ(store->get_loop("001")->version, 3u);
}

TEST_P(StoreContract, ChildrenStatusAndPlanQueries) {
  auto store = open();
  ASSERT_TRUE(create_loop(*store, make_loop("001", LoopType::plan, "", 0)).ok());
  ASSERT_TRUE(create_loop(*store, make_loop("001-002", LoopType::spec, "001", 2)).ok());
  ASSERT_TRUE(create_loop(*store, make_loop("001-001", LoopType::spec, "001", 1)).ok());
  ASSERT_TRUE(create_loop(*store, make_loop("001-001-001", LoopType::phase, "001-001", 1)).ok());
  ASSERT_TRUE(
      create_loop(*store, make_loop("code-001-001-001", LoopType::code, "001-001-001", 1)).ok());
  ASSERT_TRUE(create_loop(*store, make_loop("0010", LoopType::plan, "", 0)).ok());
  ASSERT_TRUE(create_loop(*store, make_loop("002", LoopType::plan, "", 0)).ok());
  Loop running = *store->get_loop("001-002");
  running.status = LoopStatus::running;
  ASSERT_TRUE(update_loop(*store, running).ok());

  auto specs = store->children("001");
  ASSERT_TRUE(specs.ok());
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].id, "001-001");
  EXPECT_EQ((*specs)[1].id, "001-002");
  EXPECT_EQ(store->children("001-001")->size(), 1u);
  auto code = store->children("001-001-001");
  ASSERT_EQ(code->size(), 1u);
  EXPECT_EQ((*code)[0].id, "code-001-001-001");
  EXPECT_TRUE(store->children("code-001-001-001")->empty());
  EXPECT_TRUE(store->children("002")->empty());

  auto run = store->loops_with_status(LoopStatus::running);
  ASSERT_EQ(run->size(), 1u);
  EXPECT_EQ((*run)[0].id, "001-002");
  EXPECT_EQ(store->loops_with_status(LoopStatus::pending)->size(), 6u);
  EXPECT_EQ(store->loops_of_plan("001")->size(), 5u);
  EXPECT_EQ(store->list_loops()->size(), 7u);
}

// loops_of_plan reads the tree's key ranges only; plans whose ids share a prefix stay apart.
TEST_P(StoreContract, LoopsOfPlanKeepsTreesWithSimilarIdsApart) {
  auto store = open();
  for (const char* plan : {"001", "0010", "002"}) {
    std::string p = plan;
    ASSERT_TRUE(create_loop(*store, make_loop(p, LoopType::plan, "", 0)).ok());
    ASSERT_TRUE(create_loop(*store, make_loop(p + "-001", LoopType::spec, p, 1)).ok());
    ASSERT_TRUE(
        create_loop(*store, make_loop(p + "-001-001", LoopType::phase, p + "-001", 1)).ok());
    ASSERT_TRUE(
        create_loop(*store, make_loop("code-" + p + "-001-001", LoopType::code, p + "-001-001", 1))
            .ok());
  }
  auto ids = [&](const std::string& plan) {
    std::vector<std::string> out;
    auto loops = store->loops_of_plan(plan);
    EXPECT_TRUE(loops.ok());
    if (loops.ok())
      for (const auto& l : *loops) out.push_back(l.id);
    return out;
  };
  EXPECT_EQ(ids("001"),
            (std::vector<std::string>{"001", "001-001", "001-001-001", "code-001-001-001"}));
  EXPECT_EQ(ids("0010"),
            (std::vector<std::string>{"0010", "0010-001", "0010-001-001", "code-0010-001-001"}));
  EXPECT_TRUE(ids("003").empty());
  EXPECT_EQ(store->list_loops()->size(), 12u);
}

// count_by_status reads only the top-level status: a "status" inside the context is not it.
TEST_P(StoreContract, CountByStatusMatchesTheRecords) {
  auto store = open();
  EXPECT_TRUE(store->count_by_status()->empty());
  ASSERT_TRUE(create_loop(*store, make_loop("001", LoopType::plan, "", 0)).ok());
  ASSERT_TRUE(create_loop(*store, make_loop("001-001", LoopType::spec, "001", 1)).ok());
  Loop spec = make_loop("001-002", LoopType::spec, "001", 2);
  spec.status = LoopStatus::complete;
  spec.unknown_marks["status"] = "failed";  // stored under "context", like every mark
  spec.unknown_marks["nested"] = {{"status", "blocked"}, {"list", {{{"status", "paused"}}}}};
  spec.task = "quotes \\\"status\\\":\\\"stopped\\\" and \\\\ in the text\"status\":\"failed\"";
  spec.progress = "{\"status\": \"failed\"} [\"status\"]";
  ASSERT_TRUE(create_loop(*store, spec).ok());
  Loop running = *store->get_loop("001");
  ASSERT_TRUE(running.transition_to(LoopStatus::running).ok());
  ASSERT_TRUE(update_loop(*store, running).ok());

  auto counts = store->count_by_status();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts,
            (std::map<LoopStatus, std::size_t>{
                {LoopStatus::pending, 1}, {LoopStatus::running, 1}, {LoopStatus::complete, 1}}));
}

TEST_P(StoreContract, CommitIterationWritesLoopRecordAndEventsTogether) {
  auto store = open();
  Loop loop = *create_loop(*store, make_loop("code-001-001-001", LoopType::code, "001-001-001", 1));
  loop.iteration = 1;
  loop.usage.cost_usd = 0.5;
  IterationRecord rec;
  rec.loop_id = loop.id;
  rec.n = 1;
  rec.status = IterationOutcome::failed;
  rec.exit_code = 2;
  rec.summary = "3 tests failed";
  Event ev;
  ev.loop_id = loop.id;
  ev.type = "iteration_finished";
  auto stored = commit_iteration(*store, loop, rec, {ev});
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(stored->iteration, 1);
  auto recs = store->iterations(loop.id);
  ASSERT_EQ(recs->size(), 1u);
  EXPECT_EQ((*recs)[0].exit_code, 2);
  EXPECT_EQ((*recs)[0].summary, "3 tests failed");
  auto events = store->events_since(0);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].type, "iteration_finished");

  // A stale commit writes nothing at all: not the record, not the event.
  Loop stale = loop;  // still version 1
  stale.iteration = 2;
  rec.n = 2;
  auto refused = commit_iteration(*store, stale, rec, {ev});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::conflict);
  EXPECT_EQ(store->iterations(loop.id)->size(), 1u);
  EXPECT_EQ(store->events_since(0)->size(), 1u);
  EXPECT_FALSE(store->get_iteration(loop.id, 2).ok());
  EXPECT_EQ(store->get_iteration(loop.id, 1)->status, IterationOutcome::failed);
}

TEST(TaskStoreTest, EventsAreNumberedMonotonicallyAcrossReopen) {
  TempDir dir;
  {
    auto store = open_store(dir);
    std::vector<Event> batch(3);
    for (auto& e : batch) e.type = "tick";
    auto stored = append_events(*store, batch);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ((*stored)[0].seq, 1u);
    EXPECT_EQ((*stored)[2].seq, 3u);
  }
  auto store = open_store(dir);
  EXPECT_EQ(store->last_event_seq(), 3u);
  Event e;
  e.type = "after-reopen";
  EXPECT_EQ((*append_events(*store, {e}))[0].seq, 4u);
  auto since = store->events_since(2);
  ASSERT_EQ(since->size(), 2u);
  EXPECT_EQ((*since)[0].seq, 3u);
  EXPECT_EQ((*since)[1].type, "after-reopen");
  EXPECT_EQ(store->events_since(1, 1)->size(), 1u);
  EXPECT_TRUE(store->events_since(4)->empty());
}

TEST_P(StoreContract, EventSequenceStaysOrderedPast255) {
  auto store = open({.sync = false});
  std::vector<Event> many(600);
  for (auto& e : many) e.type = "x";
  ASSERT_TRUE(append_events(*store, many).ok());
  auto all = store->events_since(0, 100000);
  ASSERT_EQ(all->size(), 600u);
  for (std::size_t i = 0; i < all->size(); ++i) EXPECT_EQ((*all)[i].seq, i + 1);
  auto page = store->events_since(255, 3);  // across the byte boundary of the key
  ASSERT_EQ(page->size(), 3u);
  EXPECT_EQ((*page)[0].seq, 256u);
  EXPECT_EQ((*page)[2].seq, 258u);
  EXPECT_TRUE(store->events_since(600)->empty());
  EXPECT_TRUE(store->events_since(0, 0)->empty());
  EXPECT_EQ(store->last_event_seq(), 600u);
}

TEST_P(StoreContract, PlanNumbersApprovalsAndMetaKeys) {
  auto store = open();
  EXPECT_EQ(*store->next_plan_number(), 1);
  EXPECT_EQ(*store->next_plan_number(), 2);
  ASSERT_TRUE(put_approval(*store, {"001", "reject", "too wide", 5}).ok());
  auto a = store->get_approval("001");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->decision, "reject");
  EXPECT_EQ((*a)->text, "too wide");
  EXPECT_FALSE(store->get_approval("002")->has_value());
  ASSERT_TRUE(store->put_meta("note/001/b", "2").ok());
  ASSERT_TRUE(store->put_meta("note/001/a", "1").ok());
  ASSERT_TRUE(store->put_meta("note/0010/a", "other plan").ok());
  ASSERT_TRUE(store->put_meta("notes", "not a note").ok());
  EXPECT_EQ(*store->get_meta("note/001/a"), std::optional<std::string>("1"));
  EXPECT_FALSE(store->get_meta("note/001/c")->has_value());
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(*store->meta_with_prefix("note/001/"),
            (Pairs{{"note/001/a", "1"}, {"note/001/b", "2"}}));
  EXPECT_TRUE(store->resume_writes().ok());
}

TEST(TaskStoreTest, ApprovalsAndPlanCounterSurviveReopen) {
  TempDir dir;
  {
    auto store = open_store(dir);
    EXPECT_EQ(*store->next_plan_number(), 1);
    EXPECT_EQ(*store->next_plan_number(), 2);
    ASSERT_TRUE(put_approval(*store, {"001", "iterate", "split spec 2", 5}).ok());
    EXPECT_FALSE(store->get_approval("002")->has_value());
  }
  auto store = open_store(dir);
  EXPECT_EQ(*store->next_plan_number(), 3);
  auto a = store->get_approval("001");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->decision, "iterate");
  EXPECT_EQ((*a)->text, "split spec 2");
}

TEST(TaskStoreTest, RefusesANewerSchema) {
  TempDir dir;
  {
    auto store = open_store(dir);
    ASSERT_TRUE(store->put_meta("schema_version", "99").ok());
  }
  auto reopened = TaskStore::open((dir / "state").string());
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.error().code, ErrorCode::unsupported);
  EXPECT_NE(reopened.error().message.find("newer loopr"), std::string::npos);
}

TEST(TaskStoreTest, SecondOpenSaysTheStoreIsInUse) {
  TempDir dir;
  auto store = open_store(dir);
  auto second = TaskStore::open((dir / "state").string());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("in use"), std::string::npos);
}

TEST_P(StoreContract, ConcurrentWritersNeverLoseAnUpdate) {
  auto store = open({.sync = false});
  ASSERT_TRUE(create_loop(*store, make_loop("001", LoopType::plan, "", 0)).ok());
  constexpr int kThreads = 4, kIncrements = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements;) {
        Loop l = *store->get_loop("001");
        l.iteration += 1;
        if (update_loop(*store, l).ok()) ++i;  // a conflict means: read again and retry
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(store->get_loop("001")->iteration, kThreads * kIncrements);
}

namespace {

// A loop as list_loop_summaries() must show it: everything list_loops() has but progress and
// the run marks (the tree marks stay: listings show each plan's tree verdict from them).
void expect_summary_of(const Loop& summary, const Loop& full) {
  EXPECT_EQ(summary.id, full.id);
  EXPECT_EQ(summary.type, full.type);
  EXPECT_EQ(summary.parent_id, full.parent_id);
  EXPECT_EQ(summary.plan_id, full.plan_id);
  EXPECT_EQ(summary.index, full.index);
  EXPECT_EQ(summary.task, full.task);
  EXPECT_EQ(summary.input_artifact, full.input_artifact);
  EXPECT_EQ(summary.output_artifacts, full.output_artifacts);
  EXPECT_EQ(summary.validation_command, full.validation_command);
  EXPECT_EQ(summary.max_iterations, full.max_iterations);
  EXPECT_EQ(summary.worktree, full.worktree);
  EXPECT_EQ(summary.branch, full.branch);
  EXPECT_EQ(summary.iteration, full.iteration);
  EXPECT_EQ(summary.status, full.status);
  EXPECT_EQ(summary.status_reason, full.status_reason);
  EXPECT_EQ(summary.usage.cost_usd, full.usage.cost_usd);
  EXPECT_EQ(summary.usage.input_tokens, full.usage.input_tokens);
  EXPECT_EQ(summary.created_at, full.created_at);
  EXPECT_EQ(summary.updated_at, full.updated_at);
  EXPECT_EQ(summary.version, full.version);
  EXPECT_TRUE(summary.progress.empty());
  EXPECT_EQ(summary.run, RunMarks{});
  EXPECT_TRUE(summary.unknown_marks.empty());
  EXPECT_EQ(summary.tree, full.tree);
}

void expect_summaries_match(const TaskStore& store) {
  auto full = store.list_loops();
  auto summaries = store.list_loop_summaries();
  ASSERT_TRUE(full.ok() && summaries.ok());
  ASSERT_EQ(summaries->size(), full->size());
  for (std::size_t i = 0; i < full->size(); ++i) expect_summary_of((*summaries)[i], (*full)[i]);
  auto counts = store.count_by_status();
  ASSERT_TRUE(counts.ok());
  std::map<LoopStatus, std::size_t> expected;
  for (const Loop& l : *full) ++expected[l.status];
  EXPECT_EQ(*counts, expected);
}

}  // namespace

// The summaries are kept in memory after the first call; every kind of write after it (create,
// update, commit_iteration, apply with several loops) must show in the next listing, and a
// reopened store must list the same.
TEST(TaskStoreTest, LoopSummariesFollowEveryWrite) {
  TempDir dir;
  {
    auto store = open_store(dir);
    EXPECT_TRUE(store->list_loop_summaries()->empty());  // kept from here on
    Loop plan = make_loop("001", LoopType::plan, "", 0);
    plan.task = "add a greeting";
    plan.progress = "feedback of earlier iterations";
    plan.tree.based_on = "abc";
    plan.run.feedback.push_back({1, FeedbackSource::validation, "failed", "the output"});
    ASSERT_TRUE(create_loop(*store, plan).ok());
    expect_summaries_match(*store);

    Loop stored = *store->get_loop("001");
    ASSERT_TRUE(stored.transition_to(LoopStatus::running).ok());
    stored.worktree = "/tmp/wt/001";
    stored.usage.cost_usd = 0.25;
    IterationRecord rec;
    rec.loop_id = "001";
    rec.n = 1;
    stored.iteration = 1;
    ASSERT_TRUE(commit_iteration(*store, stored, rec).ok());
    expect_summaries_match(*store);
    EXPECT_EQ(store->list_loop_summaries()->front().iteration, 1);
    EXPECT_EQ(store->list_loop_summaries()->front().status, LoopStatus::running);

    WriteSet set;
    set.creates.push_back(make_loop("001-002", LoopType::spec, "001", 2));
    set.creates.push_back(make_loop("001-001", LoopType::spec, "001", 1));
    Loop again = *store->get_loop("001");
    again.status_reason = "waiting for specs";
    set.updates.push_back(again);
    ASSERT_TRUE(store->apply(std::move(set)).ok());
    expect_summaries_match(*store);
    auto ids = *store->list_loop_summaries();
    ASSERT_EQ(ids.size(), 3u);
    EXPECT_EQ(ids[1].id, "001-001");  // sorted by id like list_loops()
    EXPECT_EQ(ids[0].status_reason, "waiting for specs");

    // A refused write (stale version) changes nothing in the summaries either.
    Loop stale = stored;
    stale.status_reason = "never stored";
    EXPECT_FALSE(update_loop(*store, stale).ok());
    expect_summaries_match(*store);
  }
  auto reopened = open_store(dir);
  expect_summaries_match(*reopened);
  EXPECT_EQ(reopened->list_loop_summaries()->size(), 3u);
}

// Listings while writers run: every listing is a state the store was in (no torn summary), and
// the last one shows every update.
TEST_P(StoreContract, LoopSummariesStayExactUnderConcurrentWriters) {
  auto store = open({.sync = false});
  for (int i = 1; i <= 4; ++i) {
    ASSERT_TRUE(
        create_loop(*store, make_loop("00" + std::to_string(i), LoopType::plan, "", 0)).ok());
  }
  constexpr int kIncrements = 100;
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int i = 1; i <= 4; ++i) {
    writers.emplace_back([&, i] {
      std::string id = "00" + std::to_string(i);
      for (int n = 0; n < kIncrements;) {
        Loop l = *store->get_loop(id);
        l.iteration += 1;
        l.task = "iteration " + std::to_string(l.iteration);
        if (update_loop(*store, l).ok()) ++n;
      }
    });
  }
  std::thread reader([&] {
    while (!done) {
      auto list = store->list_loop_summaries();
      ASSERT_TRUE(list.ok());
      ASSERT_EQ(list->size(), 4u);
      for (const Loop& l : *list) {
        EXPECT_EQ(l.task, l.iteration == 0 ? "" : "iteration " + std::to_string(l.iteration));
        EXPECT_EQ(l.version, static_cast<std::uint64_t>(l.iteration) + 1);
      }
    }
  });
  for (auto& th : writers) th.join();
  done = true;
  reader.join();
  auto last = store->list_loop_summaries();
  ASSERT_TRUE(last.ok());
  for (const Loop& l : *last) EXPECT_EQ(l.iteration, kIncrements);
  expect_summaries_match(*store);
}

// A daemon runs for months: RocksDB's memtables are bounded (4 MiB in all, TaskStore::open), not
// left at the default 64 MiB per family, so writing 24 MiB of events puts most of them in table
// files while the store is open (with the defaults no table file is written before 64 MiB), and
// the write-ahead log is not preallocated at 70 MiB.
TEST(TaskStoreTest, MemtablesAreBoundedSoALongRunningStoreFlushesToTableFiles) {
  TempDir dir;
  auto store = open_store(dir, StoreOptions{.sync = false});
  const std::string text(4096, 'x');
  for (int batch = 0; batch < 60; ++batch) {
    std::vector<Event> events;
    for (int i = 0; i < 100; ++i) events.push_back(Event{0, 0, "001", "log", {{"text", text}}});
    ASSERT_TRUE(append_events(*store, std::move(events)).ok());
  }
  namespace fs = std::filesystem;
  int tables = 0;
  std::uintmax_t wal_bytes = 0;
  // Flushes run in RocksDB's background threads: wait for the first table file.
  for (int tries = 0; tries < 600 && tables == 0; ++tries) {
    for (const auto& e : fs::directory_iterator(dir / "state")) {
      if (e.path().extension() == ".sst") ++tables;
    }
    if (tables == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // A flushed memtable's log is deleted afterwards, also in the background: wait for it too.
  auto wal_on_disk = [&] {
    std::uintmax_t bytes = 0;
    for (const auto& e : fs::directory_iterator(dir / "state")) {
      struct stat st {};
      if (e.path().extension() == ".log" && ::stat(e.path().c_str(), &st) == 0)
        bytes += static_cast<std::uintmax_t>(st.st_blocks) * 512;
    }
    return bytes;
  };
  for (int tries = 0; tries < 600 && (wal_bytes = wal_on_disk()) >= (16u << 20); ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_GE(tables, 1) << "no table file after 24 MiB of writes: the memtables are not bounded";
  EXPECT_LT(wal_bytes, 16u << 20) << "write-ahead log blocks on disk";
  auto back = store->events_since(0, 10);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->size(), 10u);
}
