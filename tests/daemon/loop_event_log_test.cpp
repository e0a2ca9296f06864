// The per-loop events.log: the line format (as the daemon always wrote it), folders made when
// missing, daemon-wide events left out, and whole lines under concurrent appends.
#include "daemon/loop_event_log.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>
#include <vector>

#include <loopr/core/loop.hpp>
#include <loopr/core/text.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::daemon;
using loopr::testing::read_file;
using loopr::testing::TempDir;

namespace {

Event event(std::string loop, std::uint64_t seq, std::string type, nlohmann::json data) {
  Event e;
  e.seq = seq;
  e.time = 1764236400123;  // 2025-11-27
  e.loop_id = std::move(loop);
  e.type = std::move(type);
  e.data = std::move(data);
  return e;
}

}  // namespace

TEST(LoopEventLogTest, EachEventIsOneLineOfTimeSeqTypeAndData) {
  TempDir dir;
  RepoPaths paths(dir.path());
  Event a = event("001-a", 7, "iteration_started", {{"n", 1}});
  Event b = event("001-a", 8, "cost", {{"n", 1}, {"cost_usd", 0.25}, {"note", "a \"quoted\" é"}});
  append_loop_event(paths, a);
  append_loop_event(paths, b);
  // The format the daemon wrote with an ofstream before: time, #seq, type, compact JSON.
  std::string expected;
  for (const Event* e : {&a, &b}) {
    std::ostringstream line;
    line << format_timestamp(e->time) << " #" << e->seq << " " << e->type << " "
         << json_text(e->data) << "\n";
    expected += line.str();
  }
  EXPECT_EQ(read_file(paths.loop_log_dir("001-a") / "events.log"), expected);
  EXPECT_EQ(loop_event_line(a), expected.substr(0, expected.find('\n') + 1));
}

TEST(LoopEventLogTest, MakesTheLoopsFolderWhenMissingAndAppendsAfterwards) {
  TempDir dir;
  RepoPaths paths(dir.path());
  ASSERT_FALSE(std::filesystem::exists(paths.loop_log_dir("002-b")));
  append_loop_event(paths, event("002-b", 1, "status_changed", {{"to", "running"}}));
  append_loop_event(paths, event("002-b", 2, "status_changed", {{"to", "complete"}}));
  std::string text = read_file(paths.loop_log_dir("002-b") / "events.log");
  EXPECT_NE(text.find("#1 status_changed {\"to\":\"running\"}\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#2 status_changed {\"to\":\"complete\"}\n"), std::string::npos) << text;
  EXPECT_LT(text.find("#1 "), text.find("#2 "));
}

TEST(LoopEventLogTest, ADaemonWideEventWritesNothing) {
  TempDir dir;
  RepoPaths paths(dir.path());
  append_loop_event(paths, event("", 3, "provider_paused", {{"until", 5}}));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / ".loopr"));
}

TEST(LoopEventLogTest, ConcurrentAppendsLeaveWholeLines) {
  TempDir dir;
  RepoPaths paths(dir.path());
  constexpr int kThreads = 4;
  constexpr int kEach = 100;
  const std::string big(6000, 'x');  // longer than a stream buffer: one write per line still
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i)
        append_loop_event(paths, event("003-c", static_cast<std::uint64_t>(t * kEach + i),
                                       "tool_called", {{"thread", t}, {"text", big}}));
    });
  }
  for (auto& th : threads) th.join();
  std::istringstream in(read_file(paths.loop_log_dir("003-c") / "events.log"));
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    auto brace = line.find('{');
    ASSERT_NE(brace, std::string::npos) << line.substr(0, 80);
    auto data = nlohmann::json::parse(line.substr(brace), nullptr, false);
    ASSERT_FALSE(data.is_discarded()) << "a torn line: " << line.substr(0, 80);
    EXPECT_EQ(data["text"], big);
  }
  EXPECT_EQ(lines, kThreads * kEach);
}
