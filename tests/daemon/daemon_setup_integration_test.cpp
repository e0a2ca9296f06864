// `setup:` through a real daemon (issue 27): a code loop's new worktree runs the setup before
// its first iteration; a setup that fails blocks the loop with its output before any model call
// of that loop, and after the person fixes it (here: the config, reloaded) `resume` runs the
// setup again and the tree completes and merges.
#include <csignal>

#include "daemon/daemon_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;
using nlohmann::json;

namespace {

class SetupTest : public DaemonFixture {
 protected:
  int code_requests() {
    int n = 0;
    for (const auto& r : mock->requests())
      if (r["headers"].value("x-loopr-loop-type", "") == "code") ++n;
    return n;
  }
};

}  // namespace

TEST_F(SetupTest, AFailingSetupBlocksTheCodeLoopBeforeAnyModelCallAndResumeRunsItAgain) {
  // The tests need a file the setup generates (not in git).
  const std::string fails = "setup: [\"echo 'generator: cannot find schema.json' >&2; exit 4\"]\n";
  // `warn`: the baseline's failure (the same setup) does not stop the tree before its code loop.
  make_repo(fails + "baseline: warn\n");
  write_file(dir / ".gitignore",
             ".loopr/state/\n.loopr/run/\n.loopr/worktrees/\n.loopr/archive/\n"
             ".loopr/logs/\ngenerated.txt\n");
  ASSERT_EQ(run_command("git commit -qam 'ignore generated'", dir.str()).exit_code, 0);
  TreeScript script = one_part_script();
  start_mock(script);
  // The validation needs the generated file, so it passes only in a worktree set up.
  std::string config = read_file(dir / ".loopr/config.yml");
  auto at = config.find("validation: \"sh check.sh\"");
  ASSERT_NE(at, std::string::npos);
  config.replace(at, 25, "validation: \"sh check.sh && test -f generated.txt\"");
  write_file(dir / ".loopr/config.yml", config);
  start_daemon();
  ASSERT_EQ(submit("Write the files"), "001");
  ASSERT_TRUE(wait_status("001", "awaiting_approval")) << dump_loops();
  ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);

  const std::string code = "code-001-001-001";
  ASSERT_TRUE(wait_status(code, "blocked")) << dump_loops();
  json row = loops(true)[code];
  EXPECT_EQ(row["end_reason"], "setup_failed") << row.dump();
  std::string reason = row.value("status_reason", "");
  EXPECT_NE(reason.find("failed with exit code 4"), std::string::npos) << reason;
  EXPECT_NE(reason.find("generator: cannot find schema.json"), std::string::npos) << reason;
  EXPECT_NE(reason.find("loopr resume " + code), std::string::npos) << reason;
  EXPECT_EQ(row["iteration"], 0);
  EXPECT_EQ(code_requests(), 0) << "no model call for a loop whose worktree is not set up";
  EXPECT_NE(read_file(paths().loop_log_dir(code) / "setup.log").find("cannot find schema.json"),
            std::string::npos);

  // The person fixes the setup (a SIGHUP reloads it) and resumes the loop.
  config = read_file(dir / ".loopr/config.yml");
  config.replace(config.find(fails), fails.size(), "setup: [\"echo generated > generated.txt\"]\n");
  write_file(dir / ".loopr/config.yml", config);
  ASSERT_EQ(::kill(daemon_pid, SIGHUP), 0);
  ASSERT_TRUE(wait_until(
      [&] {
        return read_file(paths().logs_dir() / "daemon.log").find("SIGHUP: config reloaded") !=
               std::string::npos;
      },
      std::chrono::seconds(10)))
      << tail_log();
  ASSERT_EQ(api("POST", "/v1/loops/" + code + "/resume").status, 200);
  ASSERT_TRUE(wait_until([&] { return loops(true)["001"].value("tree_verdict", "") == "merged"; },
                         std::chrono::seconds(90)))
      << dump_loops();
  EXPECT_EQ(loops(true)[code]["iteration"], 1);
  // The integration gate's fresh worktree ran the setup too: its check needs generated.txt.
  EXPECT_EQ(loops(true)["001"]["integration"].value("result", ""), "passed");
  EXPECT_GT(code_requests(), 0);
  // The setup's product is not in git: ignored, never committed.
  EXPECT_NE(git("ls-tree -r --name-only main").find("code/" + code + ".txt"), std::string::npos);
  EXPECT_EQ(git("ls-tree -r --name-only main").find("generated.txt"), std::string::npos);
}
