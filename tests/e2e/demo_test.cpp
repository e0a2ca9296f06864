// `loopr demo --yes` through the real binaries (loopr, loopr-mock-llm): it completes, the demo
// repository's main branch holds both specs' work and passes the project's own tests, the
// first code loop's failed iteration is in the history, and nothing is left running — also
// after Ctrl-C.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "support/mock_llm.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr::testing;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string q(const fs::path& p) { return shell_quote(p.string()); }

std::string demo_env(const TempDir& tmp) {
  return "TMPDIR=" + q(tmp.path()) + " LOOPR_MOCK_LLM_BIN=" + q(mock_llm_binary()) + " NO_COLOR=1 ";
}

// The `repo: PATH` line the demo prints first.
fs::path repo_of(const std::string& output) {
  std::smatch m;
  static const std::regex line(R"((?:^|\n)repo: (\S+))");
  if (!std::regex_search(output, m, line)) return {};
  return m[1].str();
}

std::string read_if_exists(const fs::path& p) {
  return fs::exists(p) ? read_file(p) : std::string();
}

std::string git(const fs::path& repo, const std::string& args) {
  return run_command("git -C " + q(repo) + " " + args).output;
}

// Nothing answers on the demo's daemon socket, nor on the scripted model's port.
void expect_nothing_left_running(const fs::path& repo) {
  auto status = run_command(std::string(LOOPR_BIN) + " -C " + q(repo) + " daemon status");
  EXPECT_EQ(status.exit_code, 3) << status.output;
  std::smatch m;
  std::string config = read_file(repo / ".loopr" / "config.yml");
  ASSERT_TRUE(std::regex_search(config, m, std::regex(R"(base_url: (http://127\.0\.0\.1:\d+))")))
      << config;
  auto health = run_command("curl -s -m 2 " + m[1].str() + "/health");
  EXPECT_NE(health.exit_code, 0) << "the scripted model still answers: " << health.output;
}

class Demo : public ::testing::Test {
 protected:
  void SetUp() override {
    if (mock_llm_binary().empty()) GTEST_SKIP() << "loopr-mock-llm is not built";
  }
  TempDir tmp_{"loopr-demo-e2e"};
};

TEST_F(Demo, RunsOfflineToAMergedMainThatPassesTheProjectTests) {
  auto started = Clock::now();
  auto r = run_command(demo_env(tmp_) + LOOPR_BIN + " demo --yes </dev/null");
  auto seconds = std::chrono::duration<double>(Clock::now() - started).count();
  RecordProperty("demo_seconds", std::to_string(seconds));
  std::printf("loopr demo --yes took %.1f s\n", seconds);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("scripted"), std::string::npos)
      << "the demo must say the model is scripted";
  EXPECT_NE(r.output.find("approved 001"), std::string::npos) << r.output;

  fs::path repo = repo_of(r.output);
  ASSERT_FALSE(repo.empty()) << r.output;
  EXPECT_EQ(repo.parent_path().parent_path(), tmp_.path()) << "the demo works under $TMPDIR";

  // main is checked out, clean, and passes the project's own tests with both specs' cases.
  EXPECT_EQ(git(repo, "rev-parse --abbrev-ref HEAD"), "main\n");
  EXPECT_EQ(git(repo, "status --porcelain"), "");
  auto tests = run_command("sh tests/run.sh", repo.string());
  EXPECT_EQ(tests.exit_code, 0) << tests.output;
  EXPECT_NE(tests.output.find("ok   tests/shout_test.sh"), std::string::npos) << tests.output;
  EXPECT_NE(tests.output.find("ok   tests/help_test.sh"), std::string::npos) << tests.output;

  // spec-shout-flag's work, spec-shout-docs' work (help text and README).
  EXPECT_EQ(run_command("./greet --shout Ada", repo.string()).output, "HELLO, ADA!\n");
  EXPECT_EQ(run_command("./greet Ada --shout", repo.string()).output, "HELLO, ADA!\n");
  EXPECT_EQ(run_command("./greet Ada", repo.string()).output, "Hello, Ada!\n");
  EXPECT_NE(
      run_command("./greet --help", repo.string()).output.find("usage: greet [--shout] [NAME]"),
      std::string::npos);
  EXPECT_NE(read_file(repo / "README.md").find("./greet --shout Ada"), std::string::npos);

  // The artifacts of the whole tree are on main: 1 plan, 2 specs, 3 phases.
  auto count = [&](const std::string& dir) {
    std::string files = git(repo, "ls-tree --name-only main " + dir + "/");
    return std::count(files.begin(), files.end(), '\n');
  };
  EXPECT_EQ(count(".loopr/plans"), 1);
  EXPECT_EQ(count(".loopr/specs"), 2);
  EXPECT_EQ(count(".loopr/phases"), 3);

  // The history tells the story: the first code loop failed once, then passed.
  std::string log = git(repo, "log --format=%s main");
  EXPECT_NE(log.find("loopr(code-001-001-001): iteration 1: failed"), std::string::npos) << log;
  EXPECT_NE(log.find("loopr(code-001-001-001): iteration 2: passed"), std::string::npos) << log;
  EXPECT_NE(log.find("loopr(code-001-002-001): iteration 1: passed"), std::string::npos) << log;
  EXPECT_NE(log.find("loopr(code-001-002-002): iteration 1: passed"), std::string::npos) << log;
  EXPECT_NE(r.output.find("code-001-001-001 took 2 iterations"), std::string::npos) << r.output;

  expect_nothing_left_running(repo);
}

TEST_F(Demo, CtrlCStopsTheDaemonAndTheScriptedModel) {
  fs::path out = tmp_ / "demo.out";
  std::string command =
      demo_env(tmp_) + "exec " + LOOPR_BIN + " demo --yes </dev/null >" + q(out) + " 2>&1";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Interrupt once the tree is under way (the specs run after the gate).
  bool under_way =
      wait_until([&] { return read_if_exists(out).find("approved 001") != std::string::npos; },
                 std::chrono::seconds(60));
  kill(pid, SIGINT);
  int status = 0;
  bool ended =
      wait_until([&] { return waitpid(pid, &status, WNOHANG) == pid; }, std::chrono::seconds(30));
  if (!ended) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  std::string output = read_if_exists(out);
  ASSERT_TRUE(under_way) << output;
  ASSERT_TRUE(ended) << "loopr demo did not end after SIGINT\n" << output;
  // Interrupted (130), or finished in the moment between the check and the signal (0).
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_TRUE(WEXITSTATUS(status) == 130 || WEXITSTATUS(status) == 0) << WEXITSTATUS(status) << "\n"
                                                                      << output;
  if (WEXITSTATUS(status) == 130) {
    EXPECT_NE(output.find("demo interrupted"), std::string::npos) << output;
  }
  fs::path repo = repo_of(output);
  ASSERT_FALSE(repo.empty()) << output;
  expect_nothing_left_running(repo);
}

}  // namespace
