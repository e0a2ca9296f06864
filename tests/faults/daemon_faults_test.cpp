// The fault-injection suite: a real daemon process, the real mock-llm, real git and RocksDB.
// Whatever goes wrong — the model service, the process, the model's output, the validation
// command, the control socket — no work is lost, nothing is done twice, and the daemon serves on.
#include <sys/resource.h>
#include <sys/socket.h>

#include <fstream>
#include <random>
#include <thread>

#include "daemon/daemon_fixture.hpp"
#include "support/unix_socket.hpp"

using namespace loopr;
using namespace loopr::testing;
using nlohmann::json;

namespace {

long proc_status_kb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  return -1;
}

const std::set<std::string> kTreeIds = {"001",
                                        "001-001",
                                        "001-002",
                                        "001-001-001",
                                        "001-001-002",
                                        "001-002-001",
                                        "001-002-002",
                                        "code-001-001-001",
                                        "code-001-001-002",
                                        "code-001-002-001",
                                        "code-001-002-002"};

}  // namespace

class FaultTest : public DaemonFixture {
 protected:
  // The rules mock-llm answered one loop's requests with, in order (for failure messages).
  std::string model_calls(const std::string& id) {
    std::string out;
    for (auto& r : mock->requests()) {
      if (r["headers"].value("x-loopr-loop-id", "") != id) continue;
      std::string body = r["body"].dump();
      auto at = body.find("(iteration ");
      out += std::to_string(r.value("t_ms", 0LL)) + " " +
             (r["rule"].is_string() ? r["rule"].get<std::string>() : "-") + " " +
             (at == std::string::npos ? "" : body.substr(at, 20)) +
             " status=" + r["status"].dump() + "\n";
    }
    return out;
  }

  // Every loop of the 11-loop tree complete, each with exactly `code_iterations` (code) or 1
  // iteration, numbered 1..n, the last passed; main has the four code files.
  void expect_clean_result(int code_iterations) {
    auto all = loops(true);
    std::set<std::string> ids;
    for (auto& [id, l] : all) ids.insert(id);
    EXPECT_EQ(ids, kTreeIds) << dump_loops();
    for (auto& [id, l] : all) {
      EXPECT_EQ(l["status"], "complete") << id;
      auto shown = api("GET", "/v1/loops/" + id);
      const auto& its = shown.body["iterations"];
      int expected = l["type"] == "code" ? code_iterations : 1;
      EXPECT_EQ(l["iteration"], expected) << id << "\n" << its.dump() << "\n" << model_calls(id);
      ASSERT_EQ(static_cast<int>(its.size()), expected) << id << ": " << its.dump();
      for (std::size_t i = 0; i < its.size(); ++i)
        EXPECT_EQ(its[i]["n"], static_cast<int>(i + 1)) << id;
      EXPECT_EQ(its.back()["status"], "passed") << id;
    }
    ASSERT_TRUE(wait_until(
        [&] {
          return git("show main:code/code-001-002-002.txt").find("made by") != std::string::npos;
        },
        std::chrono::seconds(30)));
    for (const auto& id : kTreeIds)
      if (id.rfind("code-", 0) == 0) {
        EXPECT_EQ(git("show main:code/" + id + ".txt"), "made by " + id + "\n");
      }
    expect_sound_repo_and_no_worktree_left();
  }
};

TEST_F(FaultTest, ModelFaultsOnATwentiethOfRepliesChangeNothingInTheResultOrTheCosts) {
  TreeScript script;
  script.faults =
      "faults:\n  rate: 0.2\n  seed: 11\n  kinds: [429, 500, 529, cut_stream, malformed_json]\n  "
      "retry_after: 1\n";
  start_tree_daemon(script);
  submit("Faulty service");
  ASSERT_TRUE(wait_status("001", "awaiting_approval", std::chrono::seconds(90))) << dump_loops();
  ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);
  ASSERT_TRUE(wait_loops([](auto& l) { return count_status(l, "complete") == 11; },
                         std::chrono::seconds(240)))
      << dump_loops();
  expect_clean_result(1);

  // Faults were injected, and retried calls cost nothing extra: every loop paid for exactly its
  // two successful calls per iteration (1,000 input + 200 output tokens at $2/$10 per million).
  std::size_t faults = 0, answered = 0;
  for (auto& r : mock->requests()) {
    if (!r["fault"].is_null())
      ++faults;
    else if (r["status"] == 200)
      ++answered;
  }
  EXPECT_GE(faults, 3u) << "the script injected too few faults to prove anything";
  EXPECT_EQ(answered, 22u);
  for (auto& [id, l] : loops(true)) {
    EXPECT_NEAR(l["cost_usd"].get<double>(), 0.008, 1e-9) << id;
    EXPECT_EQ(l["input_tokens"], 2000) << id;
    EXPECT_EQ(l["output_tokens"], 400) << id;
  }
}

TEST_F(FaultTest, KilledFiveTimesAtRandomMomentsTheTreeCompletesAndNothingIsLostOrDoubled) {
  TreeScript script;
  script.code_iterations = 2;
  script.code_delay = "300ms";
  script.spec_delay = "500ms";
  script.phase_delay = "300ms";
  start_tree_daemon(script);
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("Crashy daemon"));
  std::mt19937 rng(static_cast<unsigned>(::getpid()));
  for (int kill = 0; kill < 5; ++kill) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + rng() % 900));
    kill_daemon();
    start_daemon();
  }
  ASSERT_TRUE(wait_loops([](auto& l) { return count_status(l, "complete") == 11; },
                         std::chrono::seconds(120)))
      << dump_loops();
  expect_clean_result(2);
}

TEST_F(FaultTest, GarbageArtifactsBecomeFeedbackAndThePlanFailsCleanlyAtMaxIterations) {
  TreeScript script;
  std::string big;
  for (int i = 0; i < 5 * 1024; ++i) big += std::string(1023, 'x') + "\\n";
  script.extra_rules =
      "  - name: wrong-sections\n    match: {loop_type: plan, first_user: \"iteration 1 of\", "
      "turn: 1}\n"
      "    reply:\n      tool_use: {name: write_file, input: {path: "
      "\".loopr/plans/001-garbage.plan.md\", "
      "content: \"# Plan\\n\\n## Intro\\nno sections\\n\\n## Specs\\n- spec-x: y\\n\"}}\n"
      "  - name: binary\n    match: {loop_type: plan, first_user: \"iteration 2 of\", turn: 1}\n"
      "    reply:\n      tool_use: {name: write_file, input: {path: "
      "\".loopr/plans/001-garbage.plan.md\", "
      "content: \"\\0\\x01\\x02\\xff\\xfe binary \\x00\\x7f\"}}\n"
      "  - name: huge\n    match: {loop_type: plan, first_user: \"iteration 3 of\", turn: 1}\n"
      "    reply:\n      tool_use: {name: write_file, input: {path: "
      "\".loopr/plans/001-garbage.plan.md\", "
      "content: \"" +
      big + "\"}}\n";
  // The config's tail is appended inside its `loops:` block.
  start_tree_daemon(script, "  plan: {max_iterations: 3}\n");
  submit("Garbage");
  ASSERT_TRUE(wait_status("001", "failed", std::chrono::seconds(60))) << dump_loops();
  auto plan = api("GET", "/v1/loops/001");
  EXPECT_NE(plan.body["status_reason"].get<std::string>().find("maximum of 3 iterations"),
            std::string::npos)
      << plan.body["status_reason"];
  ASSERT_EQ(plan.body["iterations"].size(), 3u);
  for (const auto& it : plan.body["iterations"]) EXPECT_EQ(it["status"], "failed") << it.dump();
  // Each iteration's problems went into the next one's prompt.
  std::string prompts;
  for (auto& r : mock->requests())
    if (r["headers"].value("x-loopr-loop-id", "") == "001") prompts += r["body"].dump();
  EXPECT_NE(prompts.find("Previous Iteration Feedback"), std::string::npos);
  EXPECT_NE(prompts.find("Overview"), std::string::npos);  // the missing section is named
  EXPECT_EQ(loops(true).size(), 1u);                       // no children from garbage
  EXPECT_EQ(api("GET", "/v1/health").status, 200);
}

TEST_F(FaultTest, HostileValidationCommandsAreKilledCappedAndTheDaemonStaysSmall) {
  make_repo();
  // One validation script, three behaviours by loop: hang, leave a child behind, print 1 GB.
  write_file(dir / "v.sh",
             "case \"$LOOPR_LOOP_ID\" in\n"
             "  code-001-001-001) exec sleep 600.25 ;;\n"
             "  code-001-001-002) (sleep 600.5 &) ; echo left a child; exit 1 ;;\n"
             "  code-001-002-001) head -c 1000000000 /dev/zero | tr '\\0' 'x'; exit 1 ;;\n"
             "  *) exit 0 ;;\n"
             "esac\n");
  ASSERT_EQ(run_command("git add v.sh && git commit -q -m v", dir.str()).exit_code, 0);
  TreeScript script;
  start_mock(script);
  std::string cfg = read_file(dir / ".loopr/config.yml");
  cfg.replace(
      cfg.find("{max_iterations: 6, validation: \"sh check.sh\", iteration_timeout: 1m}"),
      std::string("{max_iterations: 6, validation: \"sh check.sh\", iteration_timeout: 1m}").size(),
      "{max_iterations: 1, validation: \"sh v.sh\", iteration_timeout: 3s}");
  write_file(dir / ".loopr/config.yml", cfg);
  start_daemon();
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("Hostile validation"));
  // Each hostile loop fails twice (a fresh retry, then for good); the well-behaved one completes.
  ASSERT_TRUE(wait_loops(
      [](auto& l) {
        return l.count("code-001-002-002") && l["code-001-001-001"]["status"] == "failed" &&
               l["code-001-001-002"]["status"] == "failed" &&
               l["code-001-002-001"]["status"] == "failed" &&
               l["code-001-002-002"]["status"] == "complete";
      },
      std::chrono::seconds(120)))
      << dump_loops();
  auto hang = api("GET", "/v1/loops/code-001-001-001");
  EXPECT_NE(hang.body["iterations"][0]["summary"].get<std::string>().find("timed out"),
            std::string::npos)
      << hang.body["iterations"].dump();
  auto big = api("GET", "/v1/loops/code-001-002-001");
  EXPECT_LE(big.body["validation_output"].get<std::string>().size(), 8192u);
  // The whole process group went: nothing of ours still sleeps.
  EXPECT_TRUE(wait_until([] { return run_command("pgrep -f 'sleep 600\\.[25]'").exit_code != 0; },
                         std::chrono::seconds(5)))
      << run_command("pgrep -af 'sleep 600'").output;
  long peak_kb = proc_status_kb(daemon_pid, "VmHWM");
  EXPECT_GT(peak_kb, 0);
  EXPECT_LT(peak_kb, 300 * 1024) << "the daemon's peak RSS grew with the 1 GB of output";
  EXPECT_EQ(api("GET", "/v1/health").status, 200);
}

TEST_F(FaultTest, SocketAbuseLeavesTheDaemonServingOtherClients) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, 8192);
  setrlimit(RLIMIT_NOFILE, &lim);  // the forked daemon inherits it
  make_repo();
  start_mock(TreeScript{});
  start_daemon();

  // 1,000 idle connections.
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    int fd = connect_unix(paths().socket());
    if (fd >= 0) idle.push_back(fd);
  }
  EXPECT_GE(idle.size(), 1000u);
  auto health = client().call("GET", "/v1/health", nullptr, std::chrono::seconds(10));
  ASSERT_TRUE(health.ok()) << health.error().message;
  EXPECT_EQ(health->status, 200);

  // A 100 MB body: refused early, the connection closed, nobody else affected.
  {
    int fd = connect_unix(paths().socket());
    ASSERT_GE(fd, 0);
    std::string head =
        "POST /v1/plans HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
        std::to_string(100u << 20) + "\r\n\r\n";
    ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    std::string chunk(1 << 20, 'a');
    std::size_t sent = 0;
    for (int i = 0; i < 100; ++i) {
      ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    char buf[256] = {};
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t got = ::recv(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    EXPECT_TRUE(got > 0 && std::string(buf).find(" 413 ") != std::string::npos)
        << buf << " after " << sent << " bytes";
  }
  // A client that disconnects in the middle of the event stream.
  submit("something to stream");
  for (int i = 0; i < 5; ++i) {
    int fd = connect_unix(paths().socket());
    ASSERT_GE(fd, 0);
    std::string req = "GET /v1/events?since=0 HTTP/1.1\r\nHost: x\r\n\r\n";
    ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    char buf[512];
    ::recv(fd, buf, sizeof buf, 0);
    ::close(fd);
  }
  for (int fd : idle) ::close(fd);
  EXPECT_TRUE(wait_status("001", "awaiting_approval"));
  auto after = client().call("GET", "/v1/loops", nullptr, std::chrono::seconds(10));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->status, 200);
  EXPECT_EQ(after->body["loops"].size(), 1u);
}
