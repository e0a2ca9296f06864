// journal.edit(Loop held, …) against a real RocksDB store: it stores from the record the caller
// holds without reading it again, and when that record is out of date (someone wrote the loop
// meanwhile) it loads the loop and edits it again, so no write is lost and no decision is made
// on an old record. Reads are counted in the store (record_probe.hpp).
#include <gtest/gtest.h>

#include <loopr/engine/loop_journal.hpp>
#include <loopr/store/record_probe.hpp>
#include <loopr/store/store_writes.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

struct Journal {
  TempDir dir{"loopr-journal"};
  std::unique_ptr<TaskStore> store;
  net::io_context io;
  net::thread_pool pool{1};
  engine::EventBus bus;
  std::unique_ptr<engine::LoopJournal> journal;

  Journal() {
    store = TaskStore::open((dir / "state").string(), {.sync = false}).value();
    journal = std::make_unique<engine::LoopJournal>(*store, pool, bus);
    Loop l;
    l.id = "001";
    l.type = LoopType::plan;
    l.plan_id = "001";
    l.status = LoopStatus::running;
    l.max_iterations = 5;
    create_loop(*store, l).value();
  }
  ~Journal() { pool.join(); }

  Result<Loop> edit(Loop held, engine::LoopJournal::Edit change) {
    std::optional<Result<Loop>> out;  // (Result has no default value for a future)
    auto run = [&]() -> net::awaitable<void> {
      out.emplace(co_await journal->edit(std::move(held), std::move(change)));
    };
    net::co_spawn(io, run(), net::detached);
    io.restart();
    io.run();
    return std::move(*out);
  }
};

std::optional<Error> set_max(Loop& l, int n) {
  l.max_iterations = n;
  return std::nullopt;
}

}  // namespace

TEST(LoopJournalTest, AnEditOfTheHeldRecordReadsNothing) {
  Journal j;
  Loop held = j.store->get_loop("001").value();
  watch_record(*j.store, "001");
  auto stored = j.edit(held, [](Loop& l, WriteSet&) { return set_max(l, 9); });
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(stored->max_iterations, 9);
  EXPECT_EQ(stored->version, held.version + 1);
  EXPECT_EQ(record_counts(*j.store).reads, 0u);
  EXPECT_EQ(record_counts(*j.store).writes, 1u);
  EXPECT_EQ(j.store->get_loop("001")->max_iterations, 9);
}

TEST(LoopJournalTest, AnOutOfDateHeldRecordIsReadAgainAndNothingWrittenMeanwhileIsLost) {
  Journal j;
  Loop held = j.store->get_loop("001").value();
  Loop other = held;  // another writer stores the loop after `held` was read
  other.status_reason = "written meanwhile";
  update_loop(*j.store, other).value();
  watch_record(*j.store, "001");
  int calls = 0;
  auto stored = j.edit(held, [&](Loop& l, WriteSet&) {
    ++calls;
    return set_max(l, 9);
  });
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(calls, 2) << "edited on the held record, then on the one read";
  EXPECT_EQ(record_counts(*j.store).reads, 1u);
  EXPECT_EQ(record_counts(*j.store).writes, 1u);
  const Loop now = j.store->get_loop("001").value();
  EXPECT_EQ(now.status_reason, "written meanwhile");
  EXPECT_EQ(now.max_iterations, 9);
}

TEST(LoopJournalTest, ARefusalOfAnOutOfDateHeldRecordIsDecidedAgainOnTheStoredOne) {
  Journal j;
  Loop held = j.store->get_loop("001").value();
  held.status = LoopStatus::paused;  // what the caller believes; the store says running
  std::vector<LoopStatus> seen;
  auto stored = j.edit(held, [&](Loop& l, WriteSet&) -> std::optional<Error> {
    seen.push_back(l.status);
    if (l.status != LoopStatus::running) return make_error(ErrorCode::illegal_transition, "no");
    return set_max(l, 7);
  });
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(seen, (std::vector<LoopStatus>{LoopStatus::paused, LoopStatus::running}));
  EXPECT_EQ(j.store->get_loop("001")->max_iterations, 7);
  // Refused on the stored record too: the refusal is the answer, nothing is written.
  auto refused = j.edit(j.store->get_loop("001").value(), [](Loop&, WriteSet&) {
    return std::optional<Error>(make_error(ErrorCode::illegal_transition, "no"));
  });
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(j.store->get_loop("001")->version, stored->version);
}
