// No silent fallback: a daemon whose sandbox does not work runs no command, says why in health,
// and blocks the loops that need commands with the reason (plan, spec and phase loops go on).
#include "daemon/daemon_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

class DaemonSandboxTest : public DaemonFixture {};

TreeScript one_of_each() {
  TreeScript s;
  s.specs = {"alpha"};
  s.phases = 1;
  return s;
}

}  // namespace

TEST_F(DaemonSandboxTest, WithoutBubblewrapCodeLoopsAreBlockedWithTheReasonAndNothingRuns) {
  make_repo();
  write_file(dir / "check.sh", "touch RAN-UNCONFINED\necho ok\n");
  run_command("git add check.sh && git commit -qm check", dir.str());
  start_mock(one_of_each());
  env_overrides["PATH"] = "/nonexistent";  // no bwrap to be found
  start_daemon();
  auto health = api("GET", "/v1/health");
  ASSERT_TRUE(health.body.contains("sandbox")) << health.body.dump();
  EXPECT_EQ(health.body["sandbox"]["available"], false);
  EXPECT_NE(health.body["sandbox"]["problem"].get<std::string>().find("apt install bubblewrap"),
            std::string::npos);

  std::string plan = submit("Make the files");
  ASSERT_TRUE(wait_status(plan, "awaiting_approval")) << dump_loops();
  api("POST", "/v1/loops/" + plan + "/approve");
  ASSERT_TRUE(wait_status("code-001-001-001", "blocked")) << dump_loops();
  auto l = loops(true);
  EXPECT_EQ(l["001-001"]["status"], "complete");
  EXPECT_EQ(l["001-001-001"]["status"], "complete");
  std::string reason = l["code-001-001-001"].value("status_reason", "");
  EXPECT_NE(reason.find("commands cannot run"), std::string::npos) << reason;
  EXPECT_NE(reason.find("sandbox: none"), std::string::npos) << reason;
  EXPECT_NE(reason.find("loopr resume code-001-001-001"), std::string::npos) << reason;
  EXPECT_EQ(l["code-001-001-001"]["iteration"], 0);
  // Nothing ran unconfined instead.
  EXPECT_EQ(run_command("find " + shell_quote(dir.str()) + " -name RAN-UNCONFINED | wc -l").output,
            "0\n");
}

TEST_F(DaemonSandboxTest, SandboxNoneIsSaidLoudlyInHealthAndTheLog) {
  make_repo("sandbox: none\n");
  start_mock(one_of_each());
  start_daemon();
  auto health = api("GET", "/v1/health");
  EXPECT_EQ(health.body["sandbox"]["confined"], false);
  EXPECT_NE(health.body["sandbox"]["description"].get<std::string>().find("UNCONFINED"),
            std::string::npos);
  // The log is flushed every second.
  EXPECT_TRUE(wait_until([&] {
    return read_file(paths().logs_dir() / "daemon.log").find("SANDBOX OFF") != std::string::npos;
  }));
}
