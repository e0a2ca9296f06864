// `setup:` in a worktree (engine/worktree_setup.hpp) through the real sandbox: the commands run
// once, in order, until one fails; only a setup that passed is stamped (in the worktree's git
// admin folder, where the model cannot write), so a failed or interrupted one runs again, and
// new commands in the config run in a worktree set up before.
#include <gtest/gtest.h>

#include <loopr/engine/worktree_setup.hpp>

#include "support/fakes/engine_kit.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

struct SetupHarness {
  EngineKit h{kOverLoopback, "rules: []\n", {{"README", "hello\n"}}};
  Loop loop = h.add_loop("code-001-001-001", LoopType::code, "task");
  std::atomic<bool> cancel{false};

  engine::SetupRun setup() {
    engine::EngineContext& ctx = h.engine();
    engine::SetupRequest r;
    r.workdir = loop.worktree;
    r.env = {{"LOOPR_LOOP_ID", loop.id}};
    r.cancel = &cancel;
    r.log_file = h.dir / ".loopr/logs/loops" / loop.id / "setup.log";
    auto fut = net::co_spawn(h.io, engine::run_setup(ctx, r), net::use_future);
    h.drive_until(fut);
    return fut.get();
  }
};

}  // namespace

TEST(WorktreeSetupTest, RunsOnceInTheSandboxAndIsStamped) {
  SetupHarness s;
  s.h.config->setup.commands = {"echo \"gen by $LOOPR_LOOP_ID setup=$LOOPR_SETUP\" > generated.txt",
                                "cat generated.txt; ls ~ | wc -l"};
  engine::SetupRun first = s.setup();
  EXPECT_TRUE(first.ran);
  ASSERT_TRUE(first.passed) << first.output;
  EXPECT_EQ(read_file(std::filesystem::path(s.loop.worktree) / "generated.txt"),
            "gen by code-001-001-001 setup=1\n");
  EXPECT_NE(first.output.find("$ cat generated.txt; ls ~ | wc -l\ngen by code-001-001-001"),
            std::string::npos)
      << first.output;
  EXPECT_NE(first.summary.find("2 setup commands passed in"), std::string::npos) << first.summary;
  std::string log = read_file(s.h.dir / ".loopr/logs/loops/code-001-001-001/setup.log");
  EXPECT_NE(log.find("$ echo"), std::string::npos) << log;
  // Once: the second time nothing runs.
  std::filesystem::remove(std::filesystem::path(s.loop.worktree) / "generated.txt");
  engine::SetupRun second = s.setup();
  EXPECT_FALSE(second.ran);
  EXPECT_TRUE(second.passed);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(s.loop.worktree) / "generated.txt"));
  // Other commands in the config: they run in this worktree too.
  s.h.config->setup.commands = {"echo again > again.txt"};
  EXPECT_TRUE(s.setup().ran);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(s.loop.worktree) / "again.txt"));
  // The stamp is in git's admin folder, not in the worktree (no checkpoint commits it).
  EXPECT_EQ(run_command("git status --porcelain", s.loop.worktree).output, "?? again.txt\n");
}

TEST(WorktreeSetupTest, AFailureStopsAtItsCommandAndRunsAgainNextTime) {
  SetupHarness s;
  s.h.config->setup.commands = {"echo one > one.txt", "echo 'cannot build: no compiler'; exit 3",
                                "echo never > never.txt"};
  engine::SetupRun failed = s.setup();
  EXPECT_TRUE(failed.ran);
  EXPECT_FALSE(failed.passed);
  EXPECT_FALSE(failed.could_not_start);
  EXPECT_EQ(failed.command, "echo 'cannot build: no compiler'; exit 3");
  EXPECT_NE(failed.summary.find("failed with exit code 3"), std::string::npos) << failed.summary;
  EXPECT_NE(failed.output.find("cannot build: no compiler"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(s.loop.worktree) / "never.txt"));
  std::string text = engine::setup_failure_text(failed);
  EXPECT_EQ(text.rfind(failed.summary + ":\n", 0), 0u) << text;
  EXPECT_NE(text.find("cannot build: no compiler"), std::string::npos);
  // Not stamped: the next run (after a fix) runs every command again.
  s.h.config->setup.commands[1] = "echo fixed";
  engine::SetupRun again = s.setup();
  EXPECT_TRUE(again.ran);
  EXPECT_TRUE(again.passed) << again.output;
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(s.loop.worktree) / "never.txt"));
}

TEST(WorktreeSetupTest, AStopEndsItUnstampedAndNoCommandsIsNothing) {
  SetupHarness s;
  EXPECT_FALSE(s.setup().ran);  // nothing configured
  s.h.config->setup.commands = {"sleep 30"};
  s.cancel = true;
  engine::SetupRun stopped = s.setup();
  EXPECT_TRUE(stopped.stopped);
  EXPECT_FALSE(stopped.passed);
  s.cancel = false;
  s.h.config->setup.commands = {"true"};
  EXPECT_TRUE(s.setup().ran);
}
