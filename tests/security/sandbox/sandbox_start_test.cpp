// The sandbox's start off the command's path (issue 32: netns_pool.hpp) against the real bwrap
// and real processes, in the escape suite (label `security`): the network namespace made ahead
// is a fresh one per command with only loopback, and nothing a command leaves there reaches
// another command. Its control group: command_group_test.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <thread>

#include <loopr/core/process.hpp>
#include <loopr/exec/executor.hpp>

#include "exec/netns_pool.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "worktree_fixture.hpp"

using namespace loopr;
using namespace loopr::exec;
using namespace loopr::testing;
using namespace std::chrono_literals;

namespace {

class SandboxStartTest : public loopr::testing::LoopWorktreeTest {
 protected:
  SandboxStartTest() : LoopWorktreeTest("loopr-sandbox-start") {}

  std::unique_ptr<Executor> make(bool start_ahead = true) {
    ExecutorOptions o{RepoPaths(repo)};
    o.start_ahead = start_ahead;
    return make_executor(config, o);
  }
};

std::string own_netns() {
  char buf[64] = {};
  ssize_t n = ::readlink("/proc/self/ns/net", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

}  // namespace

// Each command is in a network namespace no other command was in (nor the daemon), with
// loopback up (a server and its client inside one command talk) and no other interface.
// proves S1.7
TEST_F(SandboxStartTest, EachCommandGetsAFreshNetworkNamespaceWithOnlyLoopback) {
  auto executor = make();
  ASSERT_FALSE(executor->unavailable().has_value()) << *executor->unavailable();
  std::set<std::string> seen;
  for (int i = 0; i < 6; ++i) {
    auto r =
        run_shell(*executor, worktree,
                  "echo ns=$(readlink /proc/self/ns/net); "
                  "echo ifs=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ,); "
                  "python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); "
                  "s.listen(1); c=socket.create_connection(s.getsockname()); print('lo-ok')\"");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("ifs=lo,\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("lo-ok"), std::string::npos) << r.output;
    auto at = r.output.find("ns=");
    ASSERT_NE(at, std::string::npos) << r.output;
    std::string ns = r.output.substr(at + 3, r.output.find('\n', at) - at - 3);
    EXPECT_NE(ns, own_netns());
    EXPECT_TRUE(seen.insert(ns).second) << "a network namespace was used twice: " << ns;
  }
}

// A hostile command keeps a server on loopback and waits; a command running at the same time
// (another loop's validation) cannot reach it, and the next command finds nothing there.
// proves S1.7
TEST_F(SandboxStartTest, AServerLeftOnLoopbackReachesNoOtherCommand) {
  auto executor = make();
  ASSERT_FALSE(executor->unavailable().has_value()) << *executor->unavailable();
  const std::string port = "47311";
  ProcessResult server;
  std::thread t([&] {
    server =
        run_shell(*executor, worktree,
                  "python3 -c \"import socket, os, time\n"
                  "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                  "s.bind(('127.0.0.1', " +
                      port +
                      ")); s.listen(5); open('ready', 'w').close()\n"
                      "end=time.time()+20\n"
                      "while not os.path.exists('stop') and time.time()<end: time.sleep(0.05)\n"
                      "print('served')\"");
  });
  ASSERT_TRUE(loopr::testing::wait_until([&] { return fs::exists(worktree / "ready"); }, 20s));
  const std::string probe =
      "python3 -c \"import socket\ntry:\n socket.create_connection(("
      "'127.0.0.1', " +
      port + "), 2); print('reached')\nexcept OSError: print('refused')\"";
  auto during = run_shell(*executor, worktree, probe);
  write_file(worktree / "stop", "");
  t.join();
  EXPECT_NE(server.output.find("served"), std::string::npos) << server.output;
  EXPECT_NE(during.output.find("refused"), std::string::npos) << during.output;
  auto after = run_shell(*executor, worktree, probe);
  EXPECT_NE(after.output.find("refused"), std::string::npos) << after.output;
}

// The pool hands out each namespace once, never the daemon's own.
// proves S1.7
TEST_F(SandboxStartTest, ThePoolHandsOutEachNamespaceOnce) {
  auto pool = NetnsPool::open(2);
  if (!pool) GTEST_SKIP() << "network namespaces cannot be made and entered here (not root)";
  struct stat own {};
  ASSERT_EQ(::stat("/proc/self/ns/net", &own), 0);
  std::set<ino_t> seen;
  for (int i = 0; i < 8; ++i) {
    int fd = -1;
    ASSERT_TRUE(loopr::testing::wait_until([&] { return (fd = pool->take()) >= 0; }, 10s));
    struct stat st {};
    ASSERT_EQ(::fstat(fd, &st), 0);
    EXPECT_NE(st.st_ino, own.st_ino);
    EXPECT_TRUE(seen.insert(st.st_ino).second);
    ::close(fd);
  }
}

// The start as before issue 32 (what the bench compares with) still confines and runs.
// proves S1.7
TEST_F(SandboxStartTest, TheStartAsBeforeStillWorks) {
  auto executor = make(false);
  ASSERT_FALSE(executor->unavailable().has_value()) << *executor->unavailable();
  auto r = run_shell(*executor, worktree, "echo ns=$(readlink /proc/self/ns/net); echo done");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("done"), std::string::npos);
  EXPECT_EQ(r.output.find(own_netns()), std::string::npos) << r.output;
}
