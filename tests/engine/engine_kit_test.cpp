// The in-process engine kit (tests/support/fakes/engine_kit.hpp) keeps its store in memory:
// every test built on it (the engine's stop ladder, the manager's driver, …) runs the real
// engine and records without RocksDB (issue 44 R5). What the database itself must do is tested
// on a real one (tests/store), and the store in memory keeps the same contract (StoreContract).
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/code_loop_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;

TEST(EngineKitTest, TheInProcessKitRunsALoopWithItsStoreInMemory) {
  EngineKit h(code_turns(R"([{name: write_file, input: {path: "n.txt", content: "{{n}}"}}])"),
              kProject);
  code_setup(h, "sh check.sh", 2);
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::failed) << l.status_reason;
  EXPECT_EQ(l.end_reason, EndReason::max_iterations) << to_string(l.end_reason);
  auto iterations = h.iterations(l.id);
  ASSERT_EQ(iterations.size(), 2u);
  EXPECT_FALSE(iterations[1].details.commit.empty()) << "each iteration's checkpoint is recorded";
  EXPECT_GT(h.store->last_event_seq(), 0u) << "the run's events are numbered in the store";
  EXPECT_FALSE(std::filesystem::exists(h.dir / ".loopr/state")) << "no database was made";
}
