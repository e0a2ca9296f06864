// run_process against real child processes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <loopr/core/process.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace std::chrono_literals;
using loopr::testing::TempDir;

namespace {

// Alive and not a zombie: a killed grandchild is reparented to the nearest reaper (here the
// machine's pid 1), which may take its time to reap it; a zombie runs nothing any more.
bool pid_alive(const std::filesystem::path& pid_file) {
  std::ifstream in(pid_file);
  int pid = 0;
  in >> pid;
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] != 'Z';
}

}  // namespace

TEST(ProcessTest, CapturesOutputAndExitCode) {
  TempDir dir;
  auto spec = shell("echo out; echo err >&2; pwd; exit 3", dir.str());
  auto r = run_process(spec);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.output.find("out\n"), std::string::npos);
  EXPECT_NE(r.output.find("err\n"), std::string::npos);
  EXPECT_NE(r.output.find(dir.str()), std::string::npos);
  EXPECT_FALSE(r.succeeded());
}

TEST(ProcessTest, SeparateStderrEnvAndStdin) {
  ProcessSpec spec = shell("cat; echo \"[$LOOPR_X][${HOME:-unset}]\"; echo oops >&2");
  spec.merge_stderr = false;
  spec.env_set = {{"LOOPR_X", "42"}};
  spec.env_unset = {"HOME"};
  spec.stdin_data = "from stdin\n";
  auto r = run_process(spec);
  EXPECT_TRUE(r.succeeded());
  EXPECT_EQ(r.output, "from stdin\n[42][unset]\n");
  EXPECT_EQ(r.error_output, "oops\n");
}

TEST(ProcessTest, LinesArriveAsTheyAreWritten) {
  std::vector<std::string> lines;
  ProcessSpec spec = shell("printf 'a\\nb\\r\\nc'");
  spec.on_line = [&](std::string_view l) { lines.emplace_back(l); };
  auto r = run_process(spec);
  ASSERT_TRUE(r.succeeded());
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ProcessTest, MissingProgramIsASpawnFailureNotACrash) {
  ProcessSpec spec;
  spec.argv = {"loopr-no-such-program-xyz"};
  auto r = run_process(spec);
  EXPECT_TRUE(r.spawn_failed);
  EXPECT_NE(r.output.find("loopr-no-such-program-xyz"), std::string::npos);
  auto bad_cwd = run_process(shell("true", "/nonexistent/dir"));
  EXPECT_TRUE(bad_cwd.spawn_failed);
  EXPECT_NE(bad_cwd.output.find("/nonexistent/dir"), std::string::npos);
}

// How many descriptors this process has open.
static int open_fds() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n - 1;  // the iterator's own
}

// A start that fails for want of descriptors gives back the pipes it made: each failed command
// of a daemon at its limit must not take more. Run in a child (the death test's re-exec), whose
// descriptor limit is lowered so that the first pipe is made and a later one is not.
TEST(ProcessDeathTest, AStartWithoutEnoughDescriptorsClosesThePipesItMade) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const int before = open_fds();
        struct rlimit lim {};
        ::getrlimit(RLIMIT_NOFILE, &lim);
        // Room for three more descriptors (out's two and one of exec's): the second pipe
        // cannot be made. The limit is just past the third free number.
        std::vector<int> used;
        for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
          used.push_back(std::stoi(e.path().filename().string()));
        int fd = 0;
        for (int free_seen = 0; free_seen < 3; ++fd)
          if (std::find(used.begin(), used.end(), fd) == used.end()) ++free_seen;
        lim.rlim_cur = static_cast<rlim_t>(fd);
        ::setrlimit(RLIMIT_NOFILE, &lim);
        ProcessSpec spec = shell("true");
        spec.merge_stderr = false;
        spec.stdin_data = "x";
        int failed = 0;
        for (int i = 0; i < 20; ++i) failed += run_process(spec).spawn_failed ? 1 : 0;
        const int after = open_fds();
        std::exit(failed == 20 && after == before ? 0 : 10 + (after - before));
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ProcessTest, TimeoutKillsTheWholeGroup) {
  TempDir dir;
  auto pid_file = dir / "grandchild.pid";
  ProcessSpec spec = shell("sleep 300 & echo $! > " + pid_file.string() + "; sleep 300");
  spec.timeout = 300ms;
  auto started = std::chrono::steady_clock::now();
  auto r = run_process(spec);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.succeeded());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
  ASSERT_TRUE(std::filesystem::exists(pid_file));
  EXPECT_TRUE(loopr::testing::wait_until([&] { return !pid_alive(pid_file); }, 2s))
      << "the grandchild outlived the timeout";
}

TEST(ProcessTest, ChildrenThatOutliveTheCommandDoNotHangIt) {
  TempDir dir;
  auto pid_file = dir / "bg.pid";
  // The background child keeps stdout open; we must still return when the command exits.
  ProcessSpec spec =
      shell("(sleep 300; echo late) & echo $! > " + pid_file.string() + "; echo done");
  spec.timeout = 30s;
  auto started = std::chrono::steady_clock::now();
  auto r = run_process(spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_TRUE(loopr::testing::wait_until([&] { return !pid_alive(pid_file); }, 2s));
}

TEST(ProcessTest, HugeOutputIsCappedHeadAndTail) {
  ProcessSpec spec = shell("echo FIRST; head -c 100000000 /dev/zero | tr '\\0' x; echo; echo LAST");
  spec.output_cap = 64 * 1024;
  auto r = run_process(spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_GT(r.total_bytes, 100'000'000u);
  EXPECT_LT(r.output.size(), 70 * 1024u);
  EXPECT_EQ(r.output.rfind("FIRST\n", 0), 0u);
  EXPECT_NE(r.output.find("LAST\n"), std::string::npos);
  EXPECT_NE(r.output.find("bytes omitted"), std::string::npos);
}

TEST(ProcessTest, CancelStopsItPromptly) {
  std::atomic<bool> cancel{false};
  ProcessSpec spec = shell("sleep 300");
  spec.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(100ms);  // the moment of the user's `stop`, not a wait for a result
    cancel = true;
  });
  auto started = std::chrono::steady_clock::now();
  auto r = run_process(spec);
  canceller.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
}

TEST(CapHeadTailTest, KeepsValidUtf8) {
  std::string text = std::string(10, 'a') + "é" + std::string(10, 'b') + "€" + std::string(10, 'c');
  std::string capped = cap_head_tail(text, 12);
  EXPECT_EQ(capped.rfind("aaaaaa", 0), 0u);
  EXPECT_NE(capped.find("omitted"), std::string::npos);
  EXPECT_EQ(cap_head_tail("short", 100), "short");
  for (std::size_t cap = 2; cap < text.size(); ++cap) {
    std::string c = cap_head_tail(text, cap);
    // No stray continuation bytes at the cut points.
    auto head_end = c.find("\n[");
    ASSERT_NE(head_end, std::string::npos);
    if (head_end > 0) {
      EXPECT_NE(static_cast<unsigned char>(c[head_end - 1]) & 0xC0, 0xC0u) << cap;
    }
    auto tail_start = c.find("]\n") + 2;
    if (tail_start < c.size()) {
      EXPECT_NE(static_cast<unsigned char>(c[tail_start]) & 0xC0, 0x80u) << cap;
    }
  }
}
