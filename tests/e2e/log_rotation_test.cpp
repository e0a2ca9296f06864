// Issue 47 item 6: the daemon's own log rotates (`.loopr/logs/daemon.log` → daemon.1.log …
// daemon.3.log at LOOPR_LOG_MAX_BYTES, 10 MiB by default), so a daemon that runs for months
// keeps a bounded log; the event log (`loopr logs`) is not the daemon log and keeps working.
#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;

TEST_F(CliE2E, TheDaemonLogRotatesAtItsSizeAndKeepsAtMostThreeOldFiles) {
  make_repo();
  const auto logs = dir / ".loopr/logs";
  auto size = [&](const char* name) {
    std::error_code ec;
    auto n = std::filesystem::file_size(logs / name, ec);
    return ec ? std::uintmax_t{0} : n;
  };
  // The smallest size allowed, and every debug line: a whole tree writes far more than 4 KiB.
  auto started = run_command(env_prefix() + "LOOPR_LOG=debug LOOPR_LOG_MAX_BYTES=1024 " +
                             shell_quote(LOOPR_BIN) + " -C " + shell_quote(dir.str()) + " daemon");
  ASSERT_EQ(started.exit_code, 0) << started.output;
  ASSERT_EQ(loopr("submit --wait --yes 'Rotate'").exit_code, 0);
  // The event log (`loopr logs`, from the store) is not the daemon log: unaffected.
  CliRun events = loopr("logs 001");
  EXPECT_EQ(events.exit_code, 0) << events.err;
  EXPECT_NE(events.out.find("code-001-001-001"), std::string::npos) << events.out;
  ASSERT_EQ(loopr("daemon stop").exit_code, 0);
  EXPECT_GT(size("daemon.log"), 0u);
  EXPECT_LE(size("daemon.log"), 1024u);
  EXPECT_GT(size("daemon.1.log"), 0u) << "no rotation";
  for (const char* older : {"daemon.1.log", "daemon.2.log", "daemon.3.log"})
    EXPECT_LE(size(older), 1024u) << older;
  EXPECT_FALSE(std::filesystem::exists(logs / "daemon.4.log")) << "at most three old files";

  // A bad value: the default size, and a warning that says so.
  auto bad = run_command(env_prefix() + "LOOPR_LOG_MAX_BYTES=lots " + shell_quote(LOOPR_BIN) +
                         " -C " + shell_quote(dir.str()) + " daemon");
  ASSERT_EQ(bad.exit_code, 0) << bad.output;
  EXPECT_TRUE(wait_until([&] {
    return read_file(logs / "daemon.log").find("LOOPR_LOG_MAX_BYTES must be") != std::string::npos;
  })) << read_file(logs / "daemon.log");
  ASSERT_EQ(loopr("daemon stop").exit_code, 0);
}
