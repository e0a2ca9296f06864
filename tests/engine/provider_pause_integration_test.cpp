// A 429's pause is written to the real store and a new scheduler (a restarted daemon) honours it.
#include <gtest/gtest.h>

#include <loopr/engine/loop_journal.hpp>
#include <loopr/engine/scheduler.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::engine;
using namespace std::chrono_literals;

namespace {
awaitable<void> take_one(Scheduler& s, bool& got) {
  auto slot = co_await s.acquire(LoopType::code, false, "x");
  got = static_cast<bool>(slot);
}
}  // namespace

TEST(ProviderPauseTest, SurvivesARestartThroughTheStore) {
  loopr::testing::TempDir dir;
  std::string path = (dir / "state").string();
  {
    auto store = std::move(TaskStore::open(path).value());
    net::io_context io;
    net::thread_pool pool{1};
    EventBus bus;
    LoopJournal journal(*store, pool, bus);
    Scheduler s(io.get_executor(), SchedulerOptions{}, stored_provider_pause(*store, "anthropic"),
                persist_provider_pause(journal, "anthropic"));
    s.pause_until(std::chrono::system_clock::now() + 300ms);
  }  // the daemon goes away

  auto store = std::move(TaskStore::open(path).value());
  TimestampMs until = stored_provider_pause(*store, "anthropic");
  EXPECT_GT(until, now_ms() + 100);
  EXPECT_EQ(stored_provider_pause(*store, "openai"), 0);

  net::io_context io;
  net::thread_pool pool{1};
  EventBus bus;
  LoopJournal journal(*store, pool, bus);
  Scheduler s(io.get_executor(), SchedulerOptions{}, until,
              persist_provider_pause(journal, "anthropic"));
  bool got = false;
  auto start = std::chrono::steady_clock::now();
  net::co_spawn(io, take_one(s, got), net::detached);
  io.run();
  EXPECT_TRUE(got);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
}
