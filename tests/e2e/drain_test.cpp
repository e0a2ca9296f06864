// A drained stop through the real binary: `loopr daemon stop --drain` (and SIGTERM with
// daemon.sigterm_drain) while a code loop's iteration is in flight: the iteration finishes and is
// recorded, no new one starts, the daemon exits; the next start runs the loop's next iteration,
// so no iteration is lost or run twice. A drain past its timeout stops as without one.
#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;
using nlohmann::json;

namespace {

// The e2e tree, with every code loop's first model turn slow (`delay`), so an iteration is in
// flight for a while.
std::string slow_code_script(const std::string& delay) {
  std::string y = CliScript{}.yaml();
  const std::string code = "  - name: code\n    match: {loop_type: code}\n    reply:\n";
  auto at = y.find(code);
  if (at == std::string::npos) return y;
  return y.insert(at + code.size(), "      fault: {delay: " + delay + "}\n");
}

}  // namespace

class DrainE2E : public CliE2E {
 protected:
  // A failing check: each code loop would go on to its next iteration.
  void make_slow_repo(const std::string& delay, const std::string& extra = "") {
    make_repo_with(slow_code_script(delay), "echo 'not yet'; exit 1\n",
                   "baseline: off\nlimits:\n  no_progress_iterations: 10\nloops:\n  code: {max_iterations: 5, "
                   "validation: \"sh check.sh\", iteration_timeout: 1m}\n" +
                       extra);
  }

  json events() {
    CliRun r = loopr("--json logs");
    auto j = json::parse(r.out, nullptr, false);
    return j.is_discarded() ? json::array() : j["events"];
  }

  // The code loop's iteration `n` has started and not finished.
  bool in_flight(int n) {
    bool started = false, finished = false;
    for (const auto& e : events()) {
      if (e["loop_id"] != "code-001-001-001") continue;
      if (e["type"] == "iteration_started" && e["data"]["n"] == n) started = true;
      if (e["type"] == "iteration_finished" && e["data"]["n"] == n) finished = true;
    }
    return started && !finished;
  }

  void start_tree() { ASSERT_NO_FATAL_FAILURE(submit_and_approve("'Slow code'")); }
};

TEST_F(DrainE2E, ADrainedStopFinishesTheIterationInFlightAndTheNextStartRunsTheNextOne) {
  make_slow_repo("3s", "daemon:\n  sigterm_drain: 2m\n");
  ASSERT_NO_FATAL_FAILURE(start_tree());
  ASSERT_TRUE(wait_until([&] { return in_flight(1); }, std::chrono::seconds(60)));
  const long pid = daemon_pid();

  CliRun stop = loopr("daemon stop --drain --timeout 2m");
  ASSERT_EQ(stop.exit_code, 0) << stop.out << stop.err;
  EXPECT_NE(stop.err.find("draining"), std::string::npos) << stop.err;
  EXPECT_TRUE(process_gone(pid));

  // Started again: the loop goes on with iteration 2.
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return in_flight(2); }, std::chrono::seconds(60)));
  // This time SIGTERM drains (daemon.sigterm_drain).
  const long second = daemon_pid();
  ASSERT_EQ(::kill(static_cast<pid_t>(second), SIGTERM), 0);
  ASSERT_TRUE(wait_until([&] { return process_gone(second); }, std::chrono::seconds(60)));
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return in_flight(3); }, std::chrono::seconds(60)));

  // Each iteration started once and was recorded once; each drain let the one in flight end.
  std::map<int, int> started, finished;
  int stops = 0;
  bool draining = false;
  for (const auto& e : events()) {
    if (e["type"] == "daemon_stopping") draining = true, ++stops;
    if (e["type"] == "daemon_started") draining = false;
    if (e["loop_id"] != "code-001-001-001") continue;
    if (e["type"] == "iteration_started") {
      EXPECT_FALSE(draining) << "an iteration started during a drain: " << e.dump();
      ++started[e["data"]["n"].get<int>()];
    }
    if (e["type"] == "iteration_finished") ++finished[e["data"]["n"].get<int>()];
    if (e["type"] == "status_changed" && e["data"]["to"] == "stopped") {
      EXPECT_EQ(e["data"]["end_reason"], "daemon_drained") << e.dump();
    }
  }
  EXPECT_EQ(stops, 2);
  EXPECT_EQ(started, (std::map<int, int>{{1, 1}, {2, 1}, {3, 1}}));
  EXPECT_EQ(finished, (std::map<int, int>{{1, 1}, {2, 1}}));
  json show = loopr("--json show code-001-001-001").json();
  ASSERT_GE(show["iterations"].size(), 2u);
  EXPECT_EQ(show["iterations"][0]["n"], 1);
  EXPECT_EQ(show["iterations"][1]["n"], 2);
}

TEST_F(DrainE2E, ADrainPastItsTimeoutStopsAsWithoutOne) {
  make_slow_repo("60s");
  ASSERT_NO_FATAL_FAILURE(start_tree());
  ASSERT_TRUE(wait_until([&] { return in_flight(1); }, std::chrono::seconds(60)));
  const long pid = daemon_pid();
  auto t0 = std::chrono::steady_clock::now();
  CliRun stop = loopr("--json daemon stop --drain --timeout 1s");
  ASSERT_EQ(stop.exit_code, 0) << stop.out << stop.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_TRUE(process_gone(pid));
  EXPECT_EQ(stop.json()["stopped"], true);
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  bool stopped_as_today = false;
  for (const auto& e : events())
    if (e["loop_id"] == "code-001-001-001" && e["type"] == "status_changed" &&
        e["data"]["to"] == "stopped")
      stopped_as_today = e["data"]["end_reason"] == "daemon_stopped";
  EXPECT_TRUE(stopped_as_today);
  // Its iteration was cut short as any stop cuts it (recorded `stopped`); the next start runs
  // the next one.
  auto started_second = [&] {
    for (const auto& e : events())
      if (e["loop_id"] == "code-001-001-001" && e["type"] == "iteration_started" &&
          e["data"]["n"] == 2)
        return true;
    return false;
  };
  EXPECT_TRUE(wait_until(started_second, std::chrono::seconds(60))) << events().dump(1);
  json show = loopr("--json show code-001-001-001").json();
  ASSERT_FALSE(show["iterations"].empty());
  EXPECT_EQ(show["iterations"][0]["status"], "stopped");
  EXPECT_EQ(loopr("daemon stop --timeout 1s").exit_code, 2) << "--timeout is a drain's";
}
