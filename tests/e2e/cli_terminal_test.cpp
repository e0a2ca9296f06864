// The terminal side through the real binary: the review prompt driven through a pseudo-terminal
// (single keys, multi-line feedback, the terminal restored), colour only on a terminal and never
// with NO_COLOR, `logs -f` across a daemon restart, `watch` without a terminal.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <regex>

#include "e2e/cli_fixture.hpp"
#include "e2e/pty.hpp"

using namespace loopr::testing;
using nlohmann::json;
using namespace std::chrono_literals;

TEST_F(CliE2E, ReviewOnATerminalTakesSingleKeysAndMultiLineFeedback) {
  make_repo();
  Pty pty("exec " + loopr_command("submit --wait 'Add a thing'"));
  // Gate 1: `i`, two lines of feedback, an empty line.
  ASSERT_TRUE(pty.wait_for("[a]pprove [r]eject [i]terate [s]kip")) << pty.output();
  EXPECT_NE(pty.output().find("Plan 001"), std::string::npos);
  EXPECT_NE(pty.output().find("\x1b[1mOverview\x1b[0m"), std::string::npos)
      << "headings are bold on a terminal";
  pty.type("i");
  ASSERT_TRUE(pty.wait_for("feedback for the next iteration")) << pty.output();
  pty.type("Please USE-GAMMA instead\r");
  pty.type("and keep it short\r");
  pty.type("\r");
  ASSERT_TRUE(pty.wait_for("001 with your feedback")) << pty.output();
  // Gate 2, on the new plan: approve with one key.
  ASSERT_TRUE(pty.wait_for("[a]pprove [r]eject [i]terate [s]kip", 2)) << pty.output();
  EXPECT_NE(pty.output().find("spec-gamma"), std::string::npos)
      << "the plan iterated with the feedback";
  pty.type("a");
  EXPECT_EQ(pty.wait_exit(), 0) << pty.output();
  EXPECT_NE(pty.output().find("plan 001 complete"), std::string::npos) << pty.output();
  // The terminal is back in its normal mode (echo, lines) and the cursor is shown.
  struct termios t {};
  ASSERT_EQ(tcgetattr(pty.master(), &t), 0);
  EXPECT_TRUE(t.c_lflag & ICANON);
  EXPECT_TRUE(t.c_lflag & ECHO);
  std::string out = pty.output();
  EXPECT_GT(out.rfind("\x1b[?25h"), out.rfind("\x1b[?25l")) << "the cursor is visible at the end";

  auto l = loops();
  EXPECT_TRUE(l.count("001-001") && l.count("001-002")) << "gamma and delta specs";
  // The feedback reached the model in the plan's second prompt.
  bool seen = false;
  for (const auto& r : mock->requests())
    if (r["headers"].value("x-loopr-loop-type", "") == "plan" &&
        r["body"].dump().find("and keep it short") != std::string::npos)
      seen = true;
  EXPECT_TRUE(seen);
}

TEST_F(CliE2E, CtrlCAtTheReviewPromptRestoresTheTerminalAndExits130) {
  make_repo();
  ASSERT_EQ(loopr("submit 'Wait for me'").exit_code, 0);
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));
  Pty pty("exec " + loopr_command("review"));
  ASSERT_TRUE(pty.wait_for("[a]pprove [r]eject [i]terate [s]kip")) << pty.output();
  pty.type("\x03");  // Ctrl-C as typed: the terminal sends SIGINT
  EXPECT_EQ(pty.wait_exit(), 130) << pty.output();
  EXPECT_NE(pty.output().find("loopr: interrupted"), std::string::npos) << pty.output();
  struct termios t {};
  ASSERT_EQ(tcgetattr(pty.master(), &t), 0);
  EXPECT_TRUE(t.c_lflag & ICANON);
  EXPECT_TRUE(t.c_lflag & ECHO);
  EXPECT_EQ(loops()["001"]["status"], "awaiting_approval");
}

TEST_F(CliE2E, ColourOnlyOnATerminalAndNeverWithNoColor) {
  make_repo();
  ASSERT_EQ(loopr("submit --wait --yes 'Colours'").exit_code, 0);
  {
    Pty pty("exec " + loopr_command("list"));
    EXPECT_EQ(pty.wait_exit(), 0);
    EXPECT_NE(pty.output().find("\x1b[32mcomplete\x1b[0m"), std::string::npos) << pty.output();
    EXPECT_NE(pty.output().find("└─ "), std::string::npos);
  }
  {
    Pty pty("NO_COLOR=1 exec " + loopr_command("list"));
    EXPECT_EQ(pty.wait_exit(), 0);
    EXPECT_EQ(pty.output().find("\x1b["), std::string::npos) << pty.output();
  }
  {
    Pty pty("exec " + loopr_command("--json list"));
    EXPECT_EQ(pty.wait_exit(), 0);
    EXPECT_EQ(pty.output().find("\x1b["), std::string::npos) << pty.output();
  }
  CliRun piped = loopr("list");
  EXPECT_EQ(piped.out.find("\x1b["), std::string::npos);
}

TEST_F(CliE2E, LogsFollowSurvivesADaemonRestart) {
  make_repo();
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  std::string out = (io / "follow.out").string(), err = (io / "follow.err").string();
  auto bg = run_command(loopr_command("logs -f") + " > " + shell_quote(out) + " 2> " +
                        shell_quote(err) + " < /dev/null & echo $!");
  pid_t follower = static_cast<pid_t>(std::stol(bg.output));
  ASSERT_GT(follower, 0);
  ASSERT_TRUE(wait_until([&] {
    return read_file(out).find("daemon_started") != std::string::npos;
  })) << read_file(out);

  ASSERT_EQ(loopr("daemon stop").exit_code, 0);
  ASSERT_TRUE(wait_until([&] {
    return read_file(err).find("lost the daemon") != std::string::npos;
  })) << read_file(err);
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  ASSERT_EQ(loopr("submit 'After the restart'").exit_code, 0);
  EXPECT_TRUE(wait_until([&] {
    return read_file(out).find("001  status_changed  running → awaiting_approval") !=
           std::string::npos;
  })) << read_file(out)
      << read_file(err);
  EXPECT_NE(read_file(err).find("reconnected"), std::string::npos) << read_file(err);
  // Each event once: the first daemon_started is not repeated after the reconnect.
  std::string text = read_file(out);
  std::size_t first = text.find("daemon_stopping");
  EXPECT_NE(first, std::string::npos);
  EXPECT_EQ(text.find("daemon_stopping", first + 1), std::string::npos) << text;

  ::kill(follower, SIGINT);
  EXPECT_TRUE(wait_until([&] { return process_gone(follower); }, 5s)) << "logs -f ends on Ctrl-C";
}

TEST_F(CliE2E, WatchWithoutATerminalPrintsTheTreeOnChangeUntilInterrupted) {
  make_repo();
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  std::string out = (io / "watch.out").string();
  auto bg = run_command(loopr_command("watch") + " > " + shell_quote(out) +
                        " 2>&1 < /dev/null & echo $!");
  pid_t watcher = static_cast<pid_t>(std::stol(bg.output));
  ASSERT_TRUE(wait_until([&] { return read_file(out).find("no loops yet") != std::string::npos; }))
      << read_file(out);
  ASSERT_EQ(loopr("submit --wait --yes 'Watch this'").exit_code, 0);
  EXPECT_TRUE(wait_until([&] {
    return read_file(out).find("code-001-001-001  code   complete") != std::string::npos;
  })) << read_file(out);
  EXPECT_EQ(read_file(out).find("\x1b["), std::string::npos);
  ::kill(watcher, SIGINT);
  EXPECT_TRUE(wait_until([&] { return process_gone(watcher); }, 5s));
}

TEST_F(CliE2E, WatchOnATerminalRedrawsInPlaceAndRestoresTheCursor) {
  make_repo();
  ASSERT_EQ(loopr("submit --wait --yes 'Watch live'").exit_code, 0);
  Pty pty("exec " + loopr_command("watch"));
  ASSERT_TRUE(pty.wait_for("code-001-001-001", 2)) << pty.output();  // drawn at least twice
  EXPECT_NE(pty.output().find("\x1b[?25l"), std::string::npos);
  EXPECT_NE(pty.output().find("F\x1b"), std::string::npos) << "moves up to redraw";
  pty.interrupt();
  EXPECT_EQ(pty.wait_exit(), 0) << pty.output();
  std::string out = pty.output();
  EXPECT_GT(out.rfind("\x1b[?25h"), out.rfind("\x1b[?25l"));
}

TEST_F(CliE2E, CtrlCWhileSubmitWaitsLeavesTheLoopsRunningAndExits130) {
  CliScript slow;
  slow.plan_delay = "2s";
  make_repo(slow);
  Pty pty("exec " + loopr_command("submit --wait 'Slow one'"));
  ASSERT_TRUE(pty.wait_for("running")) << pty.output();
  pty.interrupt();
  EXPECT_EQ(pty.wait_exit(), 130) << pty.output();
  EXPECT_NE(pty.output().find("stopped waiting for 001; its loops go on in the daemon"),
            std::string::npos)
      << pty.output();
  std::string out = pty.output();
  EXPECT_GT(out.rfind("\x1b[?25h"), out.rfind("\x1b[?25l")) << "the cursor is shown again";
  EXPECT_TRUE(wait_status("001", "awaiting_approval")) << "the daemon went on without the CLI";
}
