// A command on a pseudo-terminal, for the e2e tests of the terminal flows (review, --wait).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace loopr::testing {

using namespace std::chrono_literals;

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

}  // namespace loopr::testing
