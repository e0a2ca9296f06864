// Crash recovery: the daemon is killed with SIGKILL at several moments of a tree and started
// again; the tree completes with every loop's iterations recorded exactly once, no child spawned
// twice, the pending approval still pending, worktrees intact. Plus the one-daemon rule and the
// API's answers to bad input.
#include <sys/socket.h>
#include <sys/stat.h>

#include <random>

#include <loopr/store/store_writes.hpp>
#include <loopr/store/task_store.hpp>

#include "daemon/daemon_fixture.hpp"
#include "support/unix_socket.hpp"

using namespace loopr;
using namespace loopr::testing;
using nlohmann::json;

class DaemonRecoveryTest : public DaemonFixture {
 protected:
  // Lets the tree run on for `pause` (into the moment being tested), then kills the daemon with
  // SIGKILL and starts a new one.
  void kill_and_restart_after(std::chrono::milliseconds pause) {
    std::this_thread::sleep_for(pause);
    kill_daemon();
    start_daemon();
  }

  // Waits until the base branch has `code/<loop>.txt` (the tree was merged into main).
  bool main_has_code_of(const std::string& loop, std::chrono::seconds within) {
    return wait_until(
        [&] {
          return git("ls-tree -r --name-only main code").find(loop + ".txt") != std::string::npos;
        },
        within);
  }
};

TEST_F(DaemonRecoveryTest, KilledAtFourMomentsTheTreeStillCompletesWithEveryIterationOnce) {
  TreeScript script;
  script.phases = 3;  // 2 specs × 3 phases: 6 code loops at once
  script.code_iterations = 3;
  script.code_delay = "400ms";
  script.spec_delay = "1500ms";
  script.phase_delay = "800ms";
  start_tree_daemon(script);
  submit("Six code loops");

  // Moment 0: at the gate. The pending approval survives.
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));
  kill_daemon();
  start_daemon();
  EXPECT_EQ(status_of("001"), "awaiting_approval");
  EXPECT_EQ(loops().size(), 1u);
  ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);

  // Moment 1: the specs are mid-iteration.
  ASSERT_TRUE(wait_loops([](auto& l) { return count_type_status(l, "spec", "running") == 2; }))
      << dump_loops();
  kill_and_restart_after(std::chrono::milliseconds(300));

  // Moment 2: phases are running.
  ASSERT_TRUE(wait_loops([](auto& l) { return count_type_status(l, "phase", "running") >= 2; },
                         std::chrono::seconds(60)))
      << dump_loops();
  kill_and_restart_after(std::chrono::milliseconds(200));

  // Moment 3: six code loops running.
  ASSERT_TRUE(wait_loops([](auto& l) { return count_type_status(l, "code", "running") >= 6; },
                         std::chrono::seconds(60)))
      << dump_loops();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto before = loops(true);
  kill_daemon();
  // Worktrees are intact: each running loop's folder is a sound git work tree.
  for (auto& [id, l] : before) {
    if (l["type"] != "code" || l["worktree"].is_null()) continue;
    std::string wt = l["worktree"].get<std::string>();
    ASSERT_TRUE(std::filesystem::exists(wt)) << id;
    auto st = run_command("git status --porcelain", wt);
    EXPECT_EQ(st.exit_code, 0) << id << ": " << st.output;
  }
  start_daemon();

  ASSERT_TRUE(wait_loops([](auto& l) { return count_status(l, "complete") == 15; },
                         std::chrono::seconds(120)))
      << dump_loops();
  auto all = loops(true);
  EXPECT_EQ(all.size(), 15u) << "a child was spawned twice:\n" << dump_loops();
  for (auto& [id, l] : all) {
    auto shown = api("GET", "/v1/loops/" + id);
    const auto& its = shown.body["iterations"];
    int expected = l["type"] == "code" ? 3 : 1;
    EXPECT_EQ(l["iteration"], expected) << id;
    ASSERT_EQ(static_cast<int>(its.size()), l["iteration"].get<int>()) << id << ": " << its.dump();
    for (std::size_t i = 0; i < its.size(); ++i)
      EXPECT_EQ(its[i]["n"], static_cast<int>(i + 1)) << id;
    EXPECT_EQ(its.back()["status"], "passed") << id;
  }
  ASSERT_TRUE(main_has_code_of("code-001-002-003", std::chrono::seconds(20)));
  std::string tree = git("ls-tree -r --name-only main code");
  for (const auto& c : {"code-001-001-001", "code-001-001-002", "code-001-001-003",
                        "code-001-002-001", "code-001-002-002", "code-001-002-003"})
    EXPECT_NE(tree.find(std::string(c) + ".txt"), std::string::npos) << c;
  expect_sound_repo_and_no_worktree_left();
}

// The last moment of a tree: the daemon stored `tree_complete` and was killed before the merge
// into the base branch was stored (or made). Found by the fault suite's random kills: the next
// daemon saw every loop complete and the tree marked complete, and never merged it.
TEST_F(DaemonRecoveryTest, KilledBetweenTreeCompleteAndTheMergeIntoMainTheNextDaemonMerges) {
  make_repo();
  std::string before = git("rev-parse main");
  while (!before.empty() && std::isspace(static_cast<unsigned char>(before.back())))
    before.pop_back();
  TreeScript script;
  start_mock(script);
  start_daemon();
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("Finish me"));
  ASSERT_TRUE(main_has_code_of("code-001-002-002", std::chrono::seconds(60))) << dump_loops();
  // The merge moves main before the plan's record says so (the crash point `base-merged` is
  // between): wait for the record too, so the kill does not land in between.
  ASSERT_TRUE(wait_until(
      [&] {
        auto rows = loops(true);
        if (!rows.count("001")) return false;
        const auto& merged = rows["001"]["merged_into_base"];  // null until it is stored
        return merged.is_string() && !merged.get<std::string>().empty();
      },
      std::chrono::seconds(30)))
      << dump_loops();
  kill_daemon();

  // Put the repository and the store back to that moment: main before the merge, the plan's
  // record without its merge.
  ASSERT_EQ(run_command("git reset -q --hard " + before, dir.str()).exit_code, 0);
  {
    auto store = TaskStore::open(paths().state_dir().string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    auto plan = (*store)->get_loop("001");
    ASSERT_TRUE(plan.ok());
    ASSERT_TRUE(plan->tree.tree_complete);
    ASSERT_FALSE(plan->tree.merged_into_base.empty());
    plan->tree.merged_into_base.clear();
    ASSERT_TRUE(update_loop(*(*store), *plan).ok());
  }
  ASSERT_EQ(git("ls-tree -r --name-only main code"), "");

  start_daemon();
  ASSERT_TRUE(main_has_code_of("code-001-002-002", std::chrono::seconds(30))) << tail_log();
  for (const auto& c :
       {"code-001-001-001", "code-001-001-002", "code-001-002-001", "code-001-002-002"})
    EXPECT_EQ(git("show main:code/" + std::string(c) + ".txt"), "made by " + std::string(c) + "\n")
        << c;
  EXPECT_EQ(run_command("git merge-base --is-ancestor loopr/001 main", dir.str()).exit_code, 0);
  auto fsck = run_command("git fsck --strict", dir.str());
  EXPECT_EQ(fsck.exit_code, 0) << fsck.output;
}

TEST_F(DaemonRecoveryTest, OneDaemonPerRepositoryAndAStaleSocketIsTakenOver) {
  make_repo();
  start_mock(TreeScript{});
  start_daemon();
  pid_t first = daemon_pid;
  // A second daemon (in this process) is refused and names the pid that serves.
  daemon::DaemonOptions options;
  options.repo = dir.path();
  auto second = daemon::run_daemon(options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::already_exists);
  EXPECT_NE(second.error().message.find(std::to_string(first)), std::string::npos)
      << second.error().message;
  // The first one is still serving.
  EXPECT_EQ(api("GET", "/v1/health").status, 200);
  struct stat st {};
  ASSERT_EQ(::stat(paths().socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // After a crash the socket and pid file are stale; a new daemon replaces them.
  kill_daemon();
  EXPECT_TRUE(std::filesystem::exists(paths().socket()));
  auto dead = client().call("GET", "/v1/health");
  ASSERT_FALSE(dead.ok());
  EXPECT_EQ(dead.error().code, ErrorCode::not_found);
  start_daemon();
  EXPECT_NE(daemon_pid, first);
  auto health = api("GET", "/v1/health");
  EXPECT_EQ(health.body["pid"], daemon_pid);
}

TEST_F(DaemonRecoveryTest, BadRequestsGetTheirStatusAndTheDaemonStaysUp) {
  make_repo();
  start_mock(TreeScript{});
  start_daemon();
  auto raw = [&](const std::string& method, const std::string& target, const std::string& body) {
    // The client sends JSON; bodies that are not JSON go as a JSON string's text via a raw socket.
    int fd = connect_unix(paths().socket());
    if (fd < 0) return -1;
    std::string req = method + " " + target +
                      " HTTP/1.1\r\nHost: loopr\r\nContent-Type: application/json\r\n"
                      "Content-Length: " +
                      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    ssize_t w = ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    (void)w;
    std::string resp;
    char buf[4096];
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) resp.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    if (resp.size() < 12) return 0;
    return std::atoi(resp.substr(9, 3).c_str());
  };
  EXPECT_EQ(raw("POST", "/v1/plans", "{not json"), 400);
  EXPECT_EQ(raw("POST", "/v1/plans", "[1,2]"), 400);
  EXPECT_EQ(raw("POST", "/v1/plans", "{\"request\": 5}"), 400);
  EXPECT_EQ(raw("POST", "/v1/plans", "{\"request\": \"   \"}"), 400);
  EXPECT_EQ(raw("GET", "/v1/loops/999", ""), 404);
  EXPECT_EQ(raw("GET", "/v1/loops/not-an-id", ""), 404);
  EXPECT_EQ(raw("POST", "/v1/loops/001/approve", ""), 404);
  EXPECT_EQ(raw("GET", "/v1/nothing", ""), 404);
  EXPECT_EQ(raw("DELETE", "/v1/loops", ""), 405);
  EXPECT_EQ(raw("POST", "/v1/health", ""), 405);  // the route table: a path with another method
  EXPECT_EQ(raw("GET", "/v1/plans/001/merge", ""), 405);
  EXPECT_EQ(raw("GET", "/v1/loops/001/approve", ""), 405);
  EXPECT_EQ(raw("GET", "/v1/loops/001/approve/now", ""), 404);
  EXPECT_EQ(raw("POST", "/v1/loops/001/explode", ""), 404);
  EXPECT_EQ(raw("POST", "/v1/plans/001/merge", ""), 404);
  EXPECT_EQ(raw("POST", "/v1/plans", std::string(2 << 20, 'x')), 413);

  submit("a plan");
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));
  EXPECT_EQ(raw("POST", "/v1/loops/001/iterate", "{\"feedback\": 3}"), 400);
  // A body field of the wrong shape is a 400 from its one reader (api/requests.hpp) before
  // anything is done: the plan is not rejected, gc does not run, the daemon does not stop.
  EXPECT_EQ(raw("POST", "/v1/loops/001/reject", "{\"reason\": 7}"), 400);
  EXPECT_EQ(raw("POST", "/v1/loops/001/answer", "{\"text\": \"  \"}"), 400);
  EXPECT_EQ(raw("POST", "/v1/loops/001/resume", "{\"max_iterations\": \"3\"}"), 400);
  EXPECT_EQ(raw("POST", "/v1/plans", "{\"request\": \"x\", \"max_cost_usd\": 0}"), 400);
  EXPECT_EQ(raw("POST", "/v1/gc", "{\"older_than\": 7}"), 400);
  EXPECT_EQ(raw("POST", "/v1/shutdown", "{\"timeout\": false}"), 400);
  EXPECT_TRUE(wait_status("001", "awaiting_approval"));
  EXPECT_EQ(raw("POST", "/v1/plans/001/merge", ""), 409);
  EXPECT_EQ(raw("POST", "/v1/loops/001/pause", ""), 409);

  // Random requests: never a 5xx, never a dead daemon.
  std::mt19937 rng(7);
  const char* methods[] = {"GET", "POST", "PUT", "DELETE", "PATCH"};
  const char* paths_[] = {"/v1/plans",
                          "/v1/loops",
                          "/v1/loops/001",
                          "/v1/loops/001/",
                          "/v1/loops//approve",
                          "/v1/loops/001/iterate",
                          "/v1/events?since=abc",
                          "/v1/loops?all=maybe",
                          "/",
                          "/v1/%zz",
                          "/v1/loops/001-001-001-001",
                          "/v1/plans/x/merge"};
  for (int i = 0; i < 200; ++i) {
    std::string body;
    int len = static_cast<int>(rng() % 64);
    for (int k = 0; k < len; ++k) body += static_cast<char>(rng() % 256);
    if (rng() % 3 == 0) body = "{\"request\": " + std::string(rng() % 2 ? "null" : "{}") + "}";
    std::string method = methods[rng() % 5];
    std::string target = paths_[rng() % std::size(paths_)];
    if (method == "GET" && target.rfind("/v1/events", 0) == 0)
      continue;  // a stream: no status to wait for
    int status = raw(method, target, body);
    EXPECT_GE(status, 200) << method << " " << target;
    EXPECT_LT(status, 500) << method << " " << target;
  }
  // Garbage instead of HTTP, then a client that connects and goes silent.
  for (int i = 0; i < 20; ++i) {
    int fd = connect_unix(paths().socket());
    ASSERT_GE(fd, 0);
    std::string junk;
    for (int k = 0; k < 300; ++k) junk += static_cast<char>(rng() % 256);
    ssize_t w = ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    (void)w;
    ::close(fd);
  }
  auto health = api("GET", "/v1/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body["loops"]["total"], 1);
  EXPECT_EQ(status_of("001"), "awaiting_approval");
}
