// Issue 28's confinement against the real bwrap: no setuid/setgid bit can be set inside the
// sandbox (seccomp), /dev/shm is bounded and /dev read-only, and whatever a command leaves in
// its worktree that must not stay (FIFOs, sockets, setuid bits) is swept after it, also with
// `sandbox: none`.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <loopr/exec/executor.hpp>

#include "exec/seccomp_filter.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::exec;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

class ConfinementTest : public ::testing::Test {
 protected:
  loopr::testing::TempDir dir{"loopr-confine"};
  fs::path repo, worktree;

  void SetUp() override {
    repo = fs::canonical(dir.path()) / "repo";
    worktree = repo / ".loopr/worktrees/code-001";
    fs::create_directories(worktree);
  }

  std::unique_ptr<Executor> executor(bool confined = true) {
    SandboxConfig config;
    config.limits.tmp_size = 4 << 20;
    if (!confined) config.mode = "none";
    ExecutorOptions o{RepoPaths(repo)};
    return make_executor(config, o);
  }

  ProcessResult sh(Executor& e, const std::string& command) {
    Command c = Command::shell(command, worktree);
    c.timeout = 30s;
    return e.run(c);
  }

  mode_t mode_of(const std::string& rel) {
    struct stat st {};
    ::lstat((worktree / rel).c_str(), &st);
    return st.st_mode;
  }
};

}  // namespace

TEST_F(ConfinementTest, NoSetuidOrSetgidBitCanBeSetInside) {
  ASSERT_FALSE(suid_filter_program().empty()) << "no filter for this architecture";
  auto e = executor();
  ASSERT_FALSE(e->unavailable()) << *e->unavailable();
  auto r = sh(*e,
              "cp /bin/true x; chmod 6755 x; echo chmod=$?; chmod 755 x; echo plain=$?; "
              "chmod g+s x; echo gs=$?; "
              "python3 -c \"import os; os.close(os.open('y', os.O_CREAT|os.O_WRONLY, 0o4755))\" "
              "2>/dev/null; echo open=$?; "
              "python3 -c \"import os; os.close(os.open('w', os.O_CREAT|os.O_WRONLY, 0o755))\"; "
              "echo open_plain=$?; mkdir -m 2755 d; echo mkdir=$?; mkdir e; echo mkdir_plain=$?");
  EXPECT_NE(r.output.find("chmod=1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("plain=0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gs=1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("open=1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("open_plain=0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mkdir=1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mkdir_plain=0"), std::string::npos) << r.output;
  EXPECT_EQ(mode_of("x") & 07777, 0755u);
  EXPECT_FALSE(fs::exists(worktree / "y"));
}

TEST_F(ConfinementTest, DevShmIsBoundedAndDevReadOnly) {
  auto e = executor();
  ASSERT_FALSE(e->unavailable()) << *e->unavailable();
  auto r = sh(*e,
              "head -c 8000000 /dev/zero > /dev/shm/big; echo shm=$?; rm -f /dev/shm/big; "
              "head -c 1000 /dev/zero > /dev/shm/small; echo small=$?; "
              "echo x > /dev/file; echo dev=$?; echo y > /dev/null; echo null=$?");
  EXPECT_NE(r.output.find("shm=1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("small=0"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("dev=0"), std::string::npos) << r.output;  // read-only /dev
  EXPECT_NE(r.output.find("Read-only file system"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("null=0"), std::string::npos) << r.output;
}

TEST_F(ConfinementTest, SpecialFilesAndSetuidBitsAreSweptAfterEveryCommand) {
  for (bool confined : {true, false}) {
    auto e = executor(confined);
    ASSERT_FALSE(e->unavailable());
    auto r = sh(*e,
                "mkfifo .gitignore; mkdir -p a; mkfifo a/p; python3 -c \"import socket; "
                "socket.socket(socket.AF_UNIX).bind('s')\"; echo made");
    EXPECT_NE(r.output.find("made"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("[loopr: removed from the worktree"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(".gitignore (a FIFO)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("a/p (a FIFO)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("s (a socket)"), std::string::npos) << r.output;
    for (const char* gone : {".gitignore", "a/p", "s"})
      EXPECT_FALSE(fs::exists(fs::symlink_status(worktree / gone))) << gone;
  }
  // Unconfined, nothing refuses the bit: the sweep clears it.
  auto none = executor(false);
  auto r = sh(*none, "cp /bin/true x; chmod 4755 x; echo chmod=$?");
  EXPECT_NE(r.output.find("chmod=0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cleared the setuid/setgid bits of x"), std::string::npos) << r.output;
  EXPECT_EQ(mode_of("x") & 07777, 0755u);
}
