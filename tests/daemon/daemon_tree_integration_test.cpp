// The whole tree through a real daemon process: submit → plan → approve over the API → specs →
// phases → code loops → merges → the base branch has everything, and git log names the loops.
#include "daemon/daemon_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;
using nlohmann::json;

namespace {

bool all_complete(std::map<std::string, json>& loops, std::size_t expected) {
  std::size_t complete = 0;
  for (auto& [id, l] : loops)
    if (l["status"] == "complete") ++complete;
  return complete == expected && loops.size() >= expected;
}

}  // namespace

class DaemonTreeTest : public DaemonFixture {};

TEST_F(DaemonTreeTest, SubmitApproveAndTheWholeTreeLandsOnTheBaseBranch) {
  make_repo();
  start_mock(TreeScript{});
  start_daemon();

  std::string id = submit("Write the alpha and beta files");
  EXPECT_EQ(id, "001");
  ASSERT_TRUE(wait_status("001", "awaiting_approval")) << dump_loops();
  // The gate holds: nothing is spawned before approval.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(loops().size(), 1u);
  auto plan = api("GET", "/v1/loops/001");
  ASSERT_EQ(plan.status, 200);
  EXPECT_EQ(plan.body["type"], "plan");
  ASSERT_EQ(plan.body["iterations"].size(), 1u);
  EXPECT_EQ(plan.body["iterations"][0]["status"], "passed");
  ASSERT_FALSE(plan.body["worktree"].is_null());
  std::string plan_file = plan.body["artifacts"][0].get<std::string>();
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(plan.body["worktree"].get<std::string>()) / plan_file));

  auto approved = api("POST", "/v1/loops/001/approve");
  ASSERT_EQ(approved.status, 200) << approved.body.dump();
  EXPECT_EQ(approved.body["status"], "complete");

  // 1 plan + 2 specs + 4 phases + 4 code loops.
  ASSERT_TRUE(wait_loops([](auto& l) { return all_complete(l, 11); }, std::chrono::seconds(90))) << dump_loops();
  std::set<std::string> ids;
  for (auto& [lid, l] : loops(true)) ids.insert(lid);
  std::set<std::string> expected = {"001",         "001-001",         "001-002",         "001-001-001",
                                    "001-001-002", "001-002-001",     "001-002-002",     "code-001-001-001",
                                    "code-001-001-002", "code-001-002-001", "code-001-002-002"};
  EXPECT_EQ(ids, expected);

  // The base branch gets the tree once it is complete (merge: auto).
  ASSERT_TRUE(wait_until([&] { return git("show main:code/code-001-002-002.txt").find("made by") != std::string::npos; },
                         std::chrono::seconds(20)))
      << git("log --oneline --graph --all");
  for (const auto& c : {"code-001-001-001", "code-001-001-002", "code-001-002-001", "code-001-002-002"})
    EXPECT_EQ(git(std::string("show main:code/") + c + ".txt"), std::string("made by ") + c + "\n");
  EXPECT_NE(git("show main:" + plan_file).find("## Specs to Create"), std::string::npos);
  EXPECT_NE(git("ls-tree -r --name-only main .loopr/specs").find("001-001-alpha.spec.md"), std::string::npos);
  EXPECT_NE(git("ls-tree -r --name-only main .loopr/phases").find("001-002-002-part-two.phase.md"), std::string::npos);
  // The main work tree was updated like `git merge` would.
  EXPECT_TRUE(std::filesystem::exists(dir / "code/code-001-001-001.txt"));

  std::string log = git("log --format=%s main");
  for (const auto& l : expected) EXPECT_NE(log.find("loopr(" + l + ")"), std::string::npos) << l << "\n" << log;
  // main had nothing of its own, so it fast-forwarded to the integration branch.
  EXPECT_EQ(git("rev-parse main"), git("rev-parse loopr/001"));
  EXPECT_EQ(run_command("sh check.sh", dir.str()).exit_code, 0);

  // Finished loops leave no worktrees behind; the repository is sound.
  expect_sound_repo_and_no_worktree_left();

  // The event stream replays the history (a loop_created per loop, the merges).
  std::vector<daemon::SseMessage> events;
  auto streamed = client().stream("/v1/events?since=0", [&](const daemon::SseMessage& m) {
    events.push_back(m);
    return m.event != "tree_complete";
  });
  ASSERT_TRUE(streamed.ok()) << streamed.error().message;
  std::size_t created = 0;
  for (const auto& e : events) created += e.event == "loop_created";
  EXPECT_EQ(created, 11u);
  // follow=false: the stored history, then the stream ends.
  std::size_t history = 0;
  auto ended = client().stream("/v1/events?since=0&follow=false", [&](const daemon::SseMessage&) {
    ++history;
    return true;
  });
  ASSERT_FALSE(ended.ok());
  EXPECT_EQ(ended.error().code, ErrorCode::io);
  EXPECT_GE(history, events.size());
  // Iterations carry their tokens (two model calls of 1,000 in / 200 out each).
  auto code = api("GET", "/v1/loops/code-001-001-001");
  ASSERT_EQ(code.body["iterations"].size(), 1u);
  EXPECT_EQ(code.body["iterations"][0]["input_tokens"], 2000);
  EXPECT_EQ(code.body["iterations"][0]["output_tokens"], 400);

  // The listing filters and pages (issue 18: a client asks for what it shows).
  auto code_rows = api("GET", "/v1/loops?type=code&status=complete");
  ASSERT_EQ(code_rows.status, 200) << code_rows.body.dump();
  std::vector<std::string> code_ids;
  for (const auto& l : code_rows.body["loops"]) code_ids.push_back(l["id"].get<std::string>());
  EXPECT_EQ(code_ids, (std::vector<std::string>{"code-001-001-001", "code-001-001-002",
                                                "code-001-002-001", "code-001-002-002"}));
  // A plan row filtered alone still has its whole tree's verdict.
  auto plans = api("GET", "/v1/loops?type=plan");
  ASSERT_EQ(plans.body["loops"].size(), 1u);
  EXPECT_EQ(plans.body["loops"][0]["tree_verdict"], "merged");
  EXPECT_TRUE(api("GET", "/v1/loops?status=running").body["loops"].empty());
  std::vector<std::string> paged;
  std::string after;
  for (int page = 0; page < 20; ++page) {
    auto r = api("GET", "/v1/loops?limit=4" + (after.empty() ? "" : "&after=" + after));
    ASSERT_EQ(r.status, 200);
    for (const auto& l : r.body["loops"]) paged.push_back(l["id"].get<std::string>());
    if (!r.body.contains("next")) break;
    after = r.body["next"].get<std::string>();
  }
  EXPECT_EQ(paged.size(), 11u);
  EXPECT_EQ(std::set<std::string>(paged.begin(), paged.end()), expected);
  // view=interface: every row exactly INTERFACE.md's loop (what `loopr list --json` prints as
  // it comes).
  auto plain = api("GET", "/v1/loops?view=interface&type=code");
  ASSERT_EQ(plain.body["loops"].size(), 4u);
  for (const auto& row : plain.body["loops"]) {
    EXPECT_EQ(row.size(), std::size(kApiLoopFields)) << row.dump();
    for (const char* f : kApiLoopFields) EXPECT_TRUE(row.contains(f)) << f << " " << row.dump();
  }
  EXPECT_EQ(api("GET", "/v1/loops?view=terse").status, 400);
  auto bad = api("GET", "/v1/loops?status=runing");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.value("error", "").find("unknown status `runing`"), std::string::npos);

  auto [exit_code, took] = stop_daemon();
  EXPECT_EQ(exit_code, 0);
  EXPECT_LT(took.count(), 5000);
  EXPECT_FALSE(std::filesystem::exists(paths().socket()));
}

TEST_F(DaemonTreeTest, RejectFailsThePlanAndIterateRunsAnotherIterationWithTheFeedback) {
  make_repo();
  start_mock(TreeScript{});
  start_daemon();
  submit("first");
  submit("second");
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));
  ASSERT_TRUE(wait_status("002", "awaiting_approval"));

  auto rejected = api("POST", "/v1/loops/001/reject", {{"reason", "not what I meant"}});
  ASSERT_EQ(rejected.status, 200);
  EXPECT_EQ(rejected.body["status"], "failed");
  EXPECT_NE(rejected.body["status_reason"].get<std::string>().find("not what I meant"), std::string::npos);
  // A decided gate cannot be decided again.
  EXPECT_EQ(api("POST", "/v1/loops/001/approve").status, 409);

  auto iterated = api("POST", "/v1/loops/002/iterate", {{"feedback", "Please USE-GAMMA instead."}});
  ASSERT_EQ(iterated.status, 200) << iterated.body.dump();
  ASSERT_TRUE(wait_loops([](auto& l) { return l["002"]["status"] == "awaiting_approval" && l["002"]["iteration"] == 2; }))
      << dump_loops();
  // The second iteration's prompt carried the feedback; the plan now names the new specs.
  auto requests = mock->requests();
  bool feedback_seen = false;
  for (auto& r : requests)
    if (r["headers"].value("x-loopr-loop-id", "") == "002" && r["body"].dump().find("USE-GAMMA") != std::string::npos)
      feedback_seen = true;
  EXPECT_TRUE(feedback_seen);
  std::vector<daemon::SseMessage> none;
  EXPECT_EQ(api("POST", "/v1/loops/002/iterate", {{"feedback", ""}}).status, 400);
}

TEST_F(DaemonTreeTest, SighupReloadsTheConfigAndManualMergeWaitsForTheMergeCommand) {
  make_repo();
  start_mock(TreeScript{});
  start_daemon();
  // The daemon started with `merge: auto`; switch to manual and reload.
  std::string cfg = read_file(dir / ".loopr/config.yml");
  cfg.replace(cfg.find("merge: auto"), 11, "merge: manual");
  write_file(dir / ".loopr/config.yml", cfg);
  ::kill(daemon_pid, SIGHUP);
  ASSERT_TRUE(wait_until([&] { return read_file(paths().logs_dir() / "daemon.log").find("config reloaded") != std::string::npos; }));

  submit("Manual merge please");
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));
  EXPECT_EQ(api("POST", "/v1/plans/001/merge").status, 409);  // not complete yet
  ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);
  ASSERT_TRUE(wait_loops([](auto& l) {
    std::size_t complete = 0;
    for (auto& [id, x] : l) complete += x["status"] == "complete";
    return complete == 11;
  })) << dump_loops();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(git("show main:code/code-001-001-001.txt").find("made by"), std::string::npos) << "merged without `merge`";
  auto merged = api("POST", "/v1/plans/001/merge");
  ASSERT_EQ(merged.status, 200) << merged.body.dump();
  EXPECT_EQ(merged.body["base_branch"], "main");
  EXPECT_EQ(git("rev-parse main"), merged.body["sha"].get<std::string>() + "\n");
  EXPECT_EQ(git("show main:code/code-001-001-001.txt"), "made by code-001-001-001\n");
  EXPECT_EQ(api("POST", "/v1/plans/001/merge").status, 409);  // already merged
  EXPECT_EQ(api("POST", "/v1/plans/001-001/merge").status, 400);
}

TEST_F(DaemonTreeTest, SigtermWhileLoopsRunExitsWithinFiveSecondsAndTheNextStartResumes) {
  TreeScript script;
  script.code_iterations = 3;
  script.code_delay = "1500ms";
  start_tree_daemon(script);
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("Slow"));
  ASSERT_TRUE(wait_loops([](auto& l) {
    std::size_t running = 0;
    for (auto& [id, x] : l) running += x["type"] == "code" && x["status"] == "running";
    return running >= 2;
  })) << dump_loops();
  auto [code, took] = stop_daemon();
  EXPECT_EQ(code, 0);
  EXPECT_LT(took.count(), 5000);
  EXPECT_FALSE(std::filesystem::exists(paths().socket()));
  EXPECT_FALSE(std::filesystem::exists(paths().pid_file()));
  start_daemon();
  // Stopped by the shutdown, they are pending again and resume on their own.
  ASSERT_TRUE(wait_until([&] { return git("show main:code/code-001-002-002.txt").find("made by") != std::string::npos; },
                         std::chrono::seconds(90)))
      << dump_loops();
}
