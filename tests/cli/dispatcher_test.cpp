// The front door as a table (issue 44 R3): a command declares what it needs (a repository, its
// config, the daemon) in its row, and the one dispatcher checks the line first, then the needs,
// and runs the command only when both hold. These run the real dispatcher over tables of test
// commands in real folders: a real `git init` repository, a real (bad) config file, a daemon
// socket that is not there.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::cli;
using namespace loopr::testing;

namespace {

// What the test command saw when it ran (nothing when it did not).
struct Seen {
  int runs = 0;
  std::filesystem::path root;
  std::string base_branch;
};
Seen g_seen;
bool g_line_is_bad = false;

CommandRun define_probe(CLI::App&) {
  return CommandRun([](Session& s) {
           ++g_seen.runs;
           g_seen.root = s.paths().root;  // given at once: the dispatcher found it before
           return 0;
         })
      .checked_by([] {
        if (g_line_is_bad) throw CommandError{kUsage, "the probe's line is bad", "fix it"};
      });
}

CommandRun define_anywhere(CLI::App&) {
  return CommandRun([](Session& s) {
    ++g_seen.runs;
    return s.opts.directory.empty() ? 1 : 0;
  });
}

CommandRun define_config_probe(CLI::App&) {
  return CommandRun([](Session& s) {
    ++g_seen.runs;
    g_seen.base_branch = s.config().base_branch;
    return 0;
  });
}

const Command kAnywhere{"anywhere", "needs nothing", false, Needs::nothing, define_anywhere};
const Command kInRepo{"in-repo", "needs a repository", false, Needs::repo, define_probe};
const Command kWithConfig{"with-config", "needs the config", false, Needs::config,
                          define_config_probe};
const Command kWithDaemon{"with-daemon", "needs the daemon", false, Needs::daemon, define_probe};
const Command* const kTable[] = {&kAnywhere, &kInRepo, &kWithConfig, &kWithDaemon};

class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_seen = {};
    g_line_is_bad = false;
    auto r = run_command("git init -q " + shell_quote(repo.str()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  // Runs `loopr -C DIR <words>` over kTable; the exit code, and what was printed on stderr.
  int dispatch(const std::filesystem::path& dir, const std::string& command) {
    std::vector<std::string> words{"loopr", "-C", dir.string(), command};
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    ::testing::internal::CaptureStderr();
    int rc = run_commands(kTable, static_cast<int>(argv.size()), argv.data());
    err = ::testing::internal::GetCapturedStderr();
    return rc;
  }

  TempDir repo{"dispatch-repo"};
  TempDir elsewhere{"dispatch-elsewhere"};
  std::string err;
};

TEST_F(DispatcherTest, ACommandThatNeedsNothingRunsOutsideARepository) {
  EXPECT_EQ(dispatch(elsewhere.path(), "anywhere"), 0) << err;
  EXPECT_EQ(g_seen.runs, 1);
}

TEST_F(DispatcherTest, ACommandThatNeedsARepositoryDoesNotRunOutsideOne) {
  EXPECT_EQ(dispatch(elsewhere.path(), "in-repo"), kUsage);
  EXPECT_EQ(g_seen.runs, 0) << "the run must not start where its row's needs do not hold";
  EXPECT_NE(err.find("loopr: not inside a git repository"), std::string::npos) << err;
}

TEST_F(DispatcherTest, ACommandThatNeedsARepositoryGetsTheOneItRunsIn) {
  std::filesystem::create_directories(repo / "sub/dir");
  EXPECT_EQ(dispatch(repo / "sub/dir", "in-repo"), 0) << err;
  EXPECT_EQ(g_seen.runs, 1);
  EXPECT_EQ(std::filesystem::canonical(g_seen.root), std::filesystem::canonical(repo.path()));
}

TEST_F(DispatcherTest, ACommandThatNeedsTheConfigDoesNotRunOnABadOne) {
  write_file(repo / ".loopr/config.yml", "merge: sometimes\n");
  EXPECT_EQ(dispatch(repo.path(), "with-config"), kUsage);
  EXPECT_EQ(g_seen.runs, 0);
  EXPECT_NE(err.find("config.yml"), std::string::npos) << err;

  write_file(repo / ".loopr/config.yml", "base_branch: trunk\n");
  EXPECT_EQ(dispatch(repo.path(), "with-config"), 0) << err;
  EXPECT_EQ(g_seen.base_branch, "trunk");
}

TEST_F(DispatcherTest, ACommandThatNeedsTheDaemonDoesNotRunWithoutOne) {
  EXPECT_EQ(dispatch(repo.path(), "with-daemon"), kDaemonUnreachable);
  EXPECT_EQ(g_seen.runs, 0);
  EXPECT_NE(err.find("daemon"), std::string::npos) << err;
  // Outside a repository the first need that fails is the repository's.
  EXPECT_EQ(dispatch(elsewhere.path(), "with-daemon"), kUsage);
  EXPECT_EQ(g_seen.runs, 0);
}

TEST_F(DispatcherTest, TheLineIsCheckedBeforeWhatTheCommandNeeds) {
  g_line_is_bad = true;
  EXPECT_EQ(dispatch(elsewhere.path(), "with-daemon"), kUsage);
  EXPECT_NE(err.find("the probe's line is bad"), std::string::npos) << err;
  EXPECT_EQ(dispatch(repo.path(), "with-daemon"), kUsage) << "a bad line is exit 2, not 3";
  EXPECT_EQ(g_seen.runs, 0);
}

// loopr's own table: every command that works on a repository's loops says so in its row.
TEST(CommandTableTest, TheLoopCommandsNeedTheDaemonAndTheRestSayWhatTheyNeed) {
  for (const Command* c : {&kListCommand, &kReviewCommand, &kApproveCommand, &kRejectCommand,
                           &kIterateCommand, &kPauseCommand, &kResumeCommand, &kStopCommand,
                           &kMergeCommand, &kAnswerCommand, &kLogsCommand, &kWatchCommand})
    EXPECT_EQ(c->needs, Needs::daemon) << c->name;
  for (const Command* c :
       {&kInitCommand, &kDaemonCommand, &kSubmitCommand, &kShowCommand, &kWebCommand})
    EXPECT_EQ(c->needs, Needs::repo) << c->name;
  for (const Command* c : {&kConfigCommand, &kStatsCommand, &kGcCommand})
    EXPECT_EQ(c->needs, Needs::config) << c->name;
  for (const Command* c :
       {&kValidateCommand, &kDoctorCommand, &kSandboxBridgeCommand, &kMcpServeCommand})
    EXPECT_EQ(c->needs, Needs::nothing) << c->name;
}

}  // namespace
