// The bubblewrap executor against the real bwrap, a real repository with a linked worktree
// made by git, and real processes: honest work runs, and what a command must not reach it
// cannot (each test looks from outside at what the command tried).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include <loopr/exec/executor.hpp>

#include "exec/bwrap_executor.hpp"
#include "support/command_env.hpp"
#include "support/listener.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::exec;
using namespace loopr::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

bool wait_until_accepted(Listener& l) {
  return loopr::testing::wait_until([&] { return l.accepted() > 0; }, 5s);
}

class SandboxTest : public ::testing::Test {
 protected:
  TempDir dir{"loopr-sandbox"};
  fs::path repo, worktree, home;
  SandboxConfig config;
  std::map<std::string, std::string> env_values;
  std::unique_ptr<Executor> executor;

  void SetUp() override {
    repo = fs::canonical(dir.path()) / "repo";
    home = fs::canonical(dir.path()) / "home";
    write_file(repo / "README", "hello\n");
    write_file(repo / ".loopr/config.yml", "base_branch: main\n# SECRET-CONFIG\n");
    write_file(repo / ".loopr/worktrees/other/notes.txt", "SECRET-OTHER\n");
    write_file(home / ".ssh/id_rsa", "SECRET-SSH-KEY\n");
    auto init = run_command(
        "git init -q -b main . && git config user.name t && git config user.email t@t && "
        "git config remote.origin.url https://u:SECRET-TOKEN@example.com/r.git && "
        "git add README && git commit -q -m init && "
        "git worktree add -q .loopr/worktrees/code-001 -b loop",
        repo.string());
    ASSERT_EQ(init.exit_code, 0) << init.output;
    worktree = repo / ".loopr/worktrees/code-001";
    env_values = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                  {"HOME", home.string()},
                  {"LANG", "C.UTF-8"},
                  {"GITHUB_TOKEN", "SECRET-GITHUB"},
                  {"ANTHROPIC_API_KEY", "SECRET-ANTHROPIC"}};
    config.limits.file_size = 8 << 20;
    config.limits.tmp_size = 8 << 20;
    config.limits.processes = 64;
    build();
  }

  void build() {
    ExecutorOptions o{RepoPaths(repo)};
    o.env = fake_env(env_values);
    executor = make_executor(config, o);
  }

  ProcessResult sh(const std::string& command, std::chrono::milliseconds timeout = 20s,
                   const std::string& cls = "default") {
    Command c = Command::shell(command, worktree);
    c.timeout = timeout;
    c.runner_class = cls;
    c.env = {{"LOOPR_LOOP_ID", "code-001"}};
    return executor->run(c);
  }
};

}  // namespace

TEST_F(SandboxTest, SelfTestPasses) {
  auto r = self_test(*executor, repo / ".loopr/run");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(executor->unavailable());
  EXPECT_TRUE(executor->info().confined);
}

TEST_F(SandboxTest, HonestWorkRunsInTheWorktreeWithGitReadable) {
  auto r =
      sh("pwd; echo made > new.txt; cat README; git status --short; git log --oneline | wc -l; "
         "git diff --stat; echo \"id=$LOOPR_LOOP_ID home=$HOME tmp=$TMPDIR\"; exit 3");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_FALSE(r.spawn_failed);
  EXPECT_NE(r.output.find(worktree.string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hello"), std::string::npos);
  EXPECT_NE(r.output.find("?? new.txt"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("id=code-001 home=" + home.string() + " tmp=/tmp"), std::string::npos)
      << r.output;
  EXPECT_EQ(read_file(worktree / "new.txt"), "made\n");
}

TEST_F(SandboxTest, TheEnvironmentIsAnAllowlist) {
  env_values["MY_TOOL_HOME"] = "/opt/tool";
  config.env = {"MY_TOOL_HOME"};
  build();
  auto r = sh("env; echo ---; cat /proc/1/environ | tr '\\0' '\\n'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("SECRET"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("GITHUB_TOKEN"), std::string::npos);
  EXPECT_NE(r.output.find("MY_TOOL_HOME=/opt/tool"), std::string::npos);
  EXPECT_NE(r.output.find("LOOPR_LOOP_ID=code-001"), std::string::npos);
  EXPECT_NE(r.output.find("LOOPR_SANDBOX=bubblewrap"), std::string::npos);
}

TEST_F(SandboxTest, HomeCheckoutLooprAndOtherWorktreesAreHidden) {
  auto r = sh("cat ~/.ssh/id_rsa " + shell_quote((home / ".ssh/id_rsa").string()) + " " +
              shell_quote((repo / ".loopr/config.yml").string()) + " " +
              shell_quote((repo / "README").string()) + " " +
              shell_quote((repo / ".loopr/worktrees/other/notes.txt").string()) +
              " /root/.bashrc; ls -a ~ " + shell_quote((repo / ".loopr/worktrees").string()) +
              "; cat " + shell_quote((repo / ".git/config").string()));
  EXPECT_EQ(r.output.find("SECRET"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("No such file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("repositoryformatversion"), std::string::npos) << r.output;
}

TEST_F(SandboxTest, NothingOutsideTheWorktreeCanBeWritten) {
  std::string before = read_file(repo / ".git/config");
  auto r =
      sh("echo x > " + shell_quote((repo / "PWNED").string()) +
         "; git config core.fsmonitor 'touch /tmp/x'; " + "echo x > " +
         shell_quote((repo / ".git/hooks/post-commit").string()) +
         "; git update-ref refs/heads/main HEAD; " + "echo x >> " +
         shell_quote((repo / ".loopr/config.yml").string()) + "; " +
         "echo 'gitdir: " + repo.string() + "/.git' > .git; mv .git g; rm -f .git; " +
         "echo x > /proc/self/root" + repo.string() + "/PWNED2; echo x > /usr/PWNED; echo done");
  EXPECT_NE(r.output.find("done"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(repo / "PWNED"));
  EXPECT_FALSE(fs::exists(repo / "PWNED2"));
  EXPECT_FALSE(fs::exists(repo / ".git/hooks/post-commit"));
  EXPECT_FALSE(fs::exists("/usr/PWNED"));
  EXPECT_EQ(read_file(repo / ".git/config"), before);
  EXPECT_EQ(read_file(repo / ".loopr/config.yml"), "base_branch: main\n# SECRET-CONFIG\n");
  EXPECT_EQ(read_file(worktree / ".git").rfind("gitdir: ", 0), 0u);
  EXPECT_NE(read_file(worktree / ".git").find(".git/worktrees/code-001"), std::string::npos);
  EXPECT_EQ(run_command("git rev-parse main", repo.string()).output,
            run_command("git rev-parse main~0", repo.string()).output);
  EXPECT_EQ(run_command("git log --oneline main | wc -l", repo.string()).output, "1\n");
}

TEST_F(SandboxTest, NoNetworkUnlessTheRunnerClassHasIt) {
  Listener l;
  std::string probe =
      "curl -s -m 3 http://127.0.0.1:" + std::to_string(l.port()) + "/ ; echo curl=$?";
  auto r = sh(probe);
  EXPECT_NE(r.output.find("curl=7"), std::string::npos) << r.output;  // could not connect
  EXPECT_EQ(l.accepted(), 0);

  config.network = {"net"};
  build();
  auto granted = sh(probe, 20s, "net");
  EXPECT_TRUE(wait_until_accepted(l)) << granted.output;
  auto other = sh(probe, 20s, "default");
  EXPECT_NE(other.output.find("curl=7"), std::string::npos) << other.output;
}

TEST_F(SandboxTest, NothingTheCommandStartedSurvivesIt) {
  auto r =
      sh("setsid sleep 7301 & nohup sleep 7302 >/dev/null 2>&1 & (sleep 7303 &) ; echo started");
  EXPECT_NE(r.output.find("started"), std::string::npos);
  EXPECT_TRUE(loopr::testing::wait_until([] { return processes_with("sleep 730") == 0; }, 5s));
}

TEST_F(SandboxTest, ATimeoutKillsTheWholeSandbox) {
  auto started = std::chrono::steady_clock::now();
  auto r = sh("sleep 7401 & sleep 7402", 1s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_TRUE(loopr::testing::wait_until([] { return processes_with("sleep 740") == 0; }, 5s));
}

TEST_F(SandboxTest, NoDescriptorOfTheParentReachesTheCommand) {
  int leaked = ::socket(AF_UNIX, SOCK_STREAM, 0);  // no CLOEXEC, like Asio's sockets
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  ASSERT_GT(leaked, 2);
  // The shell's own descriptors: 0, 1, 2 and the one `ls` opens to read the folder.
  auto r = sh("ls /proc/self/fd/ | tr '\\n' ' '");
  ::close(leaked);
  ::close(pipefd[0]);
  ::close(pipefd[1]);
  EXPECT_EQ(r.output, "0 1 2 3 ") << r.output;
}

TEST_F(SandboxTest, FilesAndTmpAreBounded) {
  auto r =
      sh("head -c 100000000 /dev/zero > big.bin; echo big=$?; head -c 100000000 /dev/zero > "
         "/tmp/fill; "
         "ls -l /tmp/fill; head -c 100000000 /dev/zero > ~/fill; echo home=$?");
  std::error_code ec;
  EXPECT_LE(fs::file_size(worktree / "big.bin", ec), 8u << 20) << r.output;
  EXPECT_EQ(r.output.find("big=0"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("home=0"), std::string::npos) << r.output;
}

TEST_F(SandboxTest, AForkBombEndsAtTheProcessLimit) {
  if (::geteuid() == 0 && !fs::exists("/sys/fs/cgroup/pids") &&
      !fs::exists("/sys/fs/cgroup/cgroup.controllers"))
    GTEST_SKIP() << "root without control groups: RLIMIT_NPROC does not bind root, nothing bounds "
                    "a fork bomb here";
  auto started = std::chrono::steady_clock::now();
  auto r = sh("bomb7501() { bomb7501 | bomb7501 & }; bomb7501; sleep 2; echo after", 15s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
  EXPECT_TRUE(loopr::testing::wait_until([] { return processes_with("bomb7501") == 0; }, 10s));
  // A fresh command runs normally afterwards.
  auto next = sh("echo fine");
  EXPECT_EQ(next.output, "fine\n");
}

TEST_F(SandboxTest, NestedNamespacesAreRefused) {
  auto r = sh("unshare -U true; echo rc=$?");
  EXPECT_EQ(r.output.find("rc=0"), std::string::npos) << r.output;
}

TEST_F(SandboxTest, AMissingBubblewrapIsExplainedNotRunUnconfined) {
  ExecutorOptions o{RepoPaths(repo)};
  o.bwrap = "/nonexistent/bwrap";
  auto broken = make_executor(config, o);
  auto problem = broken->unavailable();
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("apt install bubblewrap"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("sandbox: none"), std::string::npos);
  Command c = Command::shell("echo x > " + shell_quote((repo / "RAN").string()), worktree);
  auto r = broken->run(c);
  EXPECT_TRUE(r.spawn_failed);
  EXPECT_FALSE(fs::exists(repo / "RAN"));
}

TEST_F(SandboxTest, SandboxNoneRunsUnconfinedAndSaysSo) {
  config.mode = "none";
  build();
  EXPECT_FALSE(executor->info().confined);
  EXPECT_NE(executor->info().description.find("UNCONFINED"), std::string::npos);
  auto r = sh("echo x > " + shell_quote((repo / "OUTSIDE").string()) + "; echo ok");
  EXPECT_EQ(r.output, "ok\n");
  EXPECT_TRUE(fs::exists(repo / "OUTSIDE"));
}

TEST_F(SandboxTest, ACommandDoesNotOutliveADaemonKilledWithSigkill) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Plays the daemon: runs a long command, and is killed while it runs.
    sh("sleep 7601", 60s);
    _exit(0);
  }
  // The command itself runs (not bubblewrap still setting up: a daemon killed in those few ms
  // leaves a sandbox whose init has not yet tied itself to bwrap; the next daemon's start kills
  // what is left in its control groups).
  ASSERT_TRUE(loopr::testing::wait_until(
      [] {
        return processes_with(std::string("sleep\0"
                                          "7601",
                                          10)) > 0;
      },
      10s));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(loopr::testing::wait_until([] { return processes_with("sleep 7601") == 0; }, 5s))
      << "the sandboxed command outlived its daemon";
}
