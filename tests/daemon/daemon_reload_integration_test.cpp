// SIGHUP: the settings that can change while loops run take effect at once (the model client's
// URL goes to the next call), and those that cannot are named in the log and keep their value.
#include <csignal>

#include "daemon/daemon_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

class DaemonReloadTest : public DaemonFixture {};

}  // namespace

TEST_F(DaemonReloadTest, ANewModelUrlIsUsedByTheNextCallAndRestartKeysAreNamed) {
  TreeScript script = one_part_script();
  start_tree_daemon(script);
  auto first = submit("First plan");
  ASSERT_TRUE(wait_status(first, "awaiting_approval")) << dump_loops();
  std::size_t calls_on_first = mock->requests().size();
  ASSERT_GT(calls_on_first, 0u);

  // A second model server; the config now points at it, and also changes a restart key.
  MockLlm second(script.yaml());
  std::string yaml = read_file(dir / ".loopr/config.yml");
  auto at = yaml.find(mock->url());
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, mock->url().size(), second.url());
  yaml += "sandbox:\n  network: [net]\n";
  write_file(dir / ".loopr/config.yml", yaml);
  ASSERT_EQ(::kill(daemon_pid, SIGHUP), 0);
  ASSERT_TRUE(wait_until([&] {
    return read_file(paths().logs_dir() / "daemon.log").find("SIGHUP: config reloaded") != std::string::npos;
  }));

  auto next = submit("Second plan");
  ASSERT_TRUE(wait_status(next, "awaiting_approval")) << dump_loops();
  EXPECT_GT(second.requests().size(), 0u) << "the new URL was not used";
  EXPECT_EQ(mock->requests().size(), calls_on_first) << "a call still went to the old URL";
  std::string log = read_file(paths().logs_dir() / "daemon.log");
  EXPECT_NE(log.find("SIGHUP: sandbox changed in the file but needs a restart"), std::string::npos) << log;
  auto health = api("GET", "/v1/health");
  EXPECT_NE(health.body["sandbox"]["description"].get<std::string>().find("runner classes []"), std::string::npos)
      << "the sandbox changed without a restart";
}

TEST_F(DaemonReloadTest, ABadFileIsNotAppliedAndSaysWhy) {
  make_repo();
  start_mock(TreeScript{});
  start_daemon();
  write_file(dir / ".loopr/config.yml", "limits:\n  stop_on_patterns: [\"(\"]\n");
  ASSERT_EQ(::kill(daemon_pid, SIGHUP), 0);
  EXPECT_TRUE(wait_until([&] {
    return read_file(paths().logs_dir() / "daemon.log").find("SIGHUP: the config was not reloaded") !=
           std::string::npos;
  }));
  EXPECT_EQ(api("GET", "/v1/health").status, 200);
}
