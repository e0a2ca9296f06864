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

using namespace loopr::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

/// A command running on a pseudo-terminal; the test reads what it shows and types answers.
class Pty {
 public:
  explicit Pty(const std::string& command) {
    struct winsize ws {};
    ws.ws_row = 40;
    ws.ws_col = 120;
    pid_ = forkpty(&master_, nullptr, nullptr, &ws);
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    EXPECT_GT(pid_, 0);
  }
  ~Pty() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) close(master_);
  }

  /// Reads until `text` has appeared `count` times in the output (from the start), or timeout.
  bool wait_for(const std::string& text, int count = 1, std::chrono::seconds timeout = 60s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (occurrences(text) < count) {
      if (std::chrono::steady_clock::now() > deadline || !read_some(200)) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        if (exited_ && occurrences(text) < count) return false;
      }
    }
    return true;
  }

  void type(const std::string& keys) {
    ASSERT_EQ(write(master_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
  }

  /// Waits for the command to end (reading what it still prints); its exit code.
  int wait_exit(std::chrono::seconds timeout = 120s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!exited_ && std::chrono::steady_clock::now() < deadline) read_some(200);
    return exited_ ? exit_code_ : -1;
  }

  void interrupt() { kill(pid_, SIGINT); }
  const std::string& output() const { return out_; }
  int master() const { return master_; }

 private:
  pid_t pid_ = -1;
  int master_ = -1;
  std::string out_;
  bool exited_ = false;
  int exit_code_ = -1;

  int occurrences(const std::string& text) const {
    int n = 0;
    for (std::size_t p = out_.find(text); p != std::string::npos; p = out_.find(text, p + 1)) ++n;
    return n;
  }

  // Reads what is there (waiting up to `ms`); false once the command has ended and nothing is left.
  bool read_some(int ms) {
    struct pollfd p {
      master_, POLLIN, 0
    };
    if (poll(&p, 1, ms) > 0) {
      char buf[4096];
      ssize_t n = read(master_, buf, sizeof buf);
      if (n > 0) {
        out_.append(buf, static_cast<std::size_t>(n));
        return true;
      }
    }
    if (!exited_) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        // Drain what is left.
        while (poll(&p, 1, 50) > 0) {
          char buf[4096];
          ssize_t n = read(master_, buf, sizeof buf);
          if (n <= 0) break;
          out_.append(buf, static_cast<std::size_t>(n));
        }
      }
    }
    return !exited_;
  }
};

}  // namespace

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
