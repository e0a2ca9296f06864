// The tree's harder paths through a real daemon: invalidation when the plan iterates after its
// children started, rebasing when the integration branch moves (clean and conflicting, then a
// manual fix and resume), the failure policy, and pause/resume/stop over the API.
#include "daemon/daemon_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;
using nlohmann::json;

namespace {

std::string lines(int changed_line, const std::string& text) {
  std::string out;
  for (int i = 1; i <= 20; ++i) out += (i == changed_line ? text : "line " + std::to_string(i)) + "\n";
  return out;
}

/// Mock rules for the two code loops of spec 001-001: B (code-001-001-002) waits 3.5 s in its
/// first iteration, then makes `b_tools` (YAML list items) and writes a WIP file, so it fails
/// and goes on after A landed; A (code-001-001-001) waits a second, changes line 1 of
/// shared.txt and writes its code file.
std::string b_slow_a_edits_line_1(const std::string& b_tools = {}) {
  return "  - name: b-first\n    match: {loop_id: \"^code-001-001-002$\", first_user: \"iteration "
         "1 of\", turn: 1}\n"
         "    reply:\n      fault: {delay: 3500ms}\n      tool_use:\n" +
         b_tools +
         "        - {name: write_file, input: {path: wip/code-001-001-002.txt, content: "
         "\"WIP\\n\"}}\n"
         "  - name: a-first\n    match: {loop_id: \"^code-001-001-001$\", turn: 1}\n"
         "    reply:\n      fault: {delay: 1000ms}\n      tool_use:\n"
         "        - {name: edit_file, input: {path: shared.txt, old_string: \"line 1\\n\", "
         "new_string: \"line 1 by A\\n\"}}\n"
         "        - {name: write_file, input: {path: code/code-001-001-001.txt, content: \"made by "
         "A\\n\"}}\n";
}

}  // namespace

class DaemonHierarchyTest : public DaemonFixture {};

TEST_F(DaemonHierarchyTest,
       IteratingThePlanAfterItsSpecsStartedInvalidatesThemAndOnlyTheNewPlanLands) {
  TreeScript script;
  // Spec 001-002 is still thinking when the plan iterates.
  script.extra_rules = "  - name: slow-beta\n    match: {loop_id: \"^001-002$\"}\n    reply: {text: slow, fault: {delay: 60s}}\n";
  start_tree_daemon(script);
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("Write files"));
  // Spec alpha's whole subtree lands in the integration branch; beta is in flight.
  ASSERT_TRUE(wait_loops([](auto& l) {
    return l.count("code-001-001-002") && l["code-001-001-001"]["status"] == "complete" &&
           l["code-001-001-002"]["status"] == "complete" && l["001-002"]["status"] == "running";
  })) << dump_loops();
  ASSERT_TRUE(wait_until([&] { return git("show loopr/001:code/code-001-001-001.txt").find("made by") != std::string::npos; }));
  std::string beta_worktree = loops()["001-002"]["worktree"].get<std::string>();
  ASSERT_TRUE(std::filesystem::exists(beta_worktree));

  auto iterated = api("POST", "/v1/loops/001/iterate", {{"feedback", "Make it USE-GAMMA and delta instead."}});
  ASSERT_EQ(iterated.status, 200) << iterated.body.dump();
  ASSERT_TRUE(wait_loops([](auto& l) { return l["001"]["status"] == "awaiting_approval" && l["001"]["iteration"] == 2; }))
      << dump_loops();
  auto all = loops(true);
  for (const auto& old : {"001-001", "001-002", "001-001-001", "001-001-002", "code-001-001-001", "code-001-001-002"})
    EXPECT_EQ(all[old]["status"], "invalidated") << old;
  // The in-flight spec was stopped and its worktree archived; its branch is kept for reference.
  EXPECT_FALSE(std::filesystem::exists(beta_worktree));
  EXPECT_NE(git("branch --list 'loopr/archive/*'").find("loopr/archive/001-002"), std::string::npos)
      << git("branch --list");
  EXPECT_NE(git("branch --list").find("loopr/001-loops/001-001"), std::string::npos);
  // The plain list hides invalidated loops.
  EXPECT_EQ(loops().count("001-001"), 0u);

  ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);
  // New children get new ids: 001-003 (gamma) and 001-004 (delta).
  ASSERT_TRUE(wait_until([&] { return git("show main:code/code-001-004-002.txt").find("made by") != std::string::npos; },
                         std::chrono::seconds(90)))
      << dump_loops() << git("log --oneline --graph --all");
  auto fin = loops(true);
  EXPECT_EQ(fin["001-003"]["task"].get<std::string>().rfind("spec-gamma", 0), 0u);
  EXPECT_EQ(count_status(fin, "complete"), 11u) << dump_loops();
  EXPECT_EQ(count_status(fin, "invalidated"), 6u) << dump_loops();
  std::string tree = git("ls-tree -r --name-only main");
  EXPECT_NE(tree.find("code/code-001-003-001.txt"), std::string::npos);
  EXPECT_EQ(tree.find("code/code-001-001-001.txt"), std::string::npos) << "old work reached the result:\n" << tree;
  EXPECT_EQ(tree.find("001-001-alpha.spec.md"), std::string::npos) << tree;
  EXPECT_NE(tree.find("001-003-gamma.spec.md"), std::string::npos) << tree;
  EXPECT_NE(git("show main:" + fin["001"]["artifacts"][0].get<std::string>()).find("spec-delta"), std::string::npos);
}

class DaemonRebaseTest : public DaemonFixture, public ::testing::WithParamInterface<bool> {};

// Code loop A edits line 1 of shared.txt and lands at once; B edits line 20 (apart) or line 1
// (colliding) in a slow first iteration that fails, so it meets A's merge at its next boundary.
TEST_P(DaemonRebaseTest, ALoopRebasesWhenTheIntegrationBranchMoves) {
  const bool collide = GetParam();
  TreeScript script;
  script.specs = {"alpha"};
  // Edits (not whole-file writes), so each loop changes only its own line; A waits a second so
  // that B's worktree surely predates A's merge.
  std::string b_old = collide ? "line 1\\n" : "line 20\\n";
  std::string b_new = collide ? "line 1 by B\\n" : "line 20 by B\\n";
  std::string b_text = collide ? lines(1, "line 1 by B") : lines(20, "line 20 by B");
  script.extra_rules =
      b_slow_a_edits_line_1("        - {name: edit_file, input: {path: shared.txt, old_string: \"" +
                            b_old + "\", new_string: \"" + b_new + "\"}}\n");
  start_tree_daemon(script);
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("Edit shared.txt twice"));
  ASSERT_TRUE(wait_status("code-001-001-001", "complete")) << dump_loops();

  if (!collide) {
    ASSERT_TRUE(wait_until([&] { return git("show main:code/code-001-001-002.txt").find("made by") != std::string::npos; },
                           std::chrono::seconds(60)))
        << dump_loops();
    std::string merged = git("show main:shared.txt");
    EXPECT_NE(merged.find("line 1 by A"), std::string::npos) << merged;
    EXPECT_NE(merged.find("line 20 by B"), std::string::npos) << merged;
    // B's rebase is in its events.
    std::vector<daemon::SseMessage> events;
    auto s = client().stream("/v1/events?since=0&loop=code-001-001-002", [&](const daemon::SseMessage& m) {
      events.push_back(m);
      return m.event != "merged";
    });
    ASSERT_TRUE(s.ok());
    bool rebased = false, rebasing = false;
    for (auto& e : events) {
      rebased |= e.event == "rebased";
      rebasing |= e.event == "status_changed" && e.data.find("\"to\":\"rebasing\"") != std::string::npos;
    }
    EXPECT_TRUE(rebased);
    EXPECT_TRUE(rebasing);
    return;
  }

  ASSERT_TRUE(wait_status("code-001-001-002", "blocked")) << dump_loops();
  auto b = api("GET", "/v1/loops/code-001-001-002");
  EXPECT_NE(b.body["status_reason"].get<std::string>().find("shared.txt"), std::string::npos) << b.body.dump();
  ASSERT_TRUE(b.body.contains("conflicts"));
  EXPECT_EQ(b.body["conflicts"], json::array({"shared.txt"}));
  // Work intact: B's edit is committed on its branch and present in its worktree.
  std::string wt = b.body["worktree"].get<std::string>();
  EXPECT_EQ(read_file(std::filesystem::path(wt) / "shared.txt"), b_text);
  EXPECT_EQ(run_command("git status --porcelain", wt).output, "");
  EXPECT_NE(run_command("git log --format=%s -1", wt).output.find("loopr(code-001-001-002): iteration 1"), std::string::npos);
  // The conflict is also an event with the paths.
  std::vector<daemon::SseMessage> events;
  auto s = client().stream("/v1/events?since=0&loop=code-001-001-002", [&](const daemon::SseMessage& m) {
    events.push_back(m);
    return m.event != "rebase_conflict";
  });
  ASSERT_TRUE(s.ok());
  EXPECT_NE(events.back().data.find("shared.txt"), std::string::npos);

  // The user resolves it in the worktree, then resumes.
  auto rebase = run_command("git rebase loopr/001", wt);
  EXPECT_NE(rebase.exit_code, 0);
  std::string resolved = lines(1, "line 1 by A and B");
  write_file(std::filesystem::path(wt) / "shared.txt", resolved);
  auto cont = run_command("git add shared.txt && GIT_EDITOR=true git rebase --continue", wt);
  ASSERT_EQ(cont.exit_code, 0) << cont.output;
  auto resumed = api("POST", "/v1/loops/code-001-001-002/resume");
  ASSERT_EQ(resumed.status, 200) << resumed.body.dump();
  ASSERT_TRUE(wait_until([&] { return git("show main:code/code-001-001-002.txt").find("made by") != std::string::npos; },
                         std::chrono::seconds(60)))
      << dump_loops();
  EXPECT_EQ(git("show main:shared.txt"), resolved);
}

INSTANTIATE_TEST_SUITE_P(Edits, DaemonRebaseTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Colliding" : "Apart"; });

TEST_F(DaemonHierarchyTest, AFailedCodeLoopIsRetriedOnceFreshThenItsAncestorsFail) {
  make_repo("");
  TreeScript script;
  script.specs = {"alpha"};
  // code-001-001-001 never gets past WIP.
  script.extra_rules = "  - name: stuck\n    match: {loop_id: \"^code-001-001-001$\", turn: 1}\n    reply:\n      tool_use:\n"
                       "        name: write_file\n        input: {path: wip/code-001-001-001.txt, content: \"WIP {{n}}\\n\"}\n";
  start_mock(script);
  // Two iterations per attempt keep the test short.
  write_file(dir / ".loopr/config.yml",
             read_file(dir / ".loopr/config.yml") + "");
  std::string cfg = read_file(dir / ".loopr/config.yml");
  cfg.replace(cfg.find("max_iterations: 6"), 17, "max_iterations: 2");
  write_file(dir / ".loopr/config.yml", cfg);
  start_daemon();
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("Fail once"));
  ASSERT_TRUE(wait_status("001", "failed", std::chrono::seconds(90))) << dump_loops();
  auto all = loops(true);
  EXPECT_EQ(all["code-001-001-001"]["status"], "failed");
  EXPECT_EQ(all["code-001-001-001"]["iteration"], 4);  // two attempts of two iterations
  EXPECT_EQ(all["001-001-001"]["status"], "failed");
  EXPECT_EQ(all["001-001"]["status"], "failed");
  EXPECT_NE(all["001"]["status_reason"].get<std::string>().find("code-001-001-001 failed"), std::string::npos);
  // The sibling finishes (on_failure: finish_siblings) and nothing reaches main.
  ASSERT_TRUE(wait_status("code-001-001-002", "complete")) << dump_loops();
  EXPECT_EQ(git("show main:code/code-001-001-002.txt").find("made by"), std::string::npos);
  // The first attempt's commits are kept on an archive branch; the second started fresh.
  EXPECT_NE(git("branch --list 'loopr/archive/*'").find("loopr/archive/code-001-001-001"), std::string::npos);
  std::string first = git("log --format=%s loopr/archive/code-001-001-001");
  EXPECT_NE(first.find("iteration 2: failed"), std::string::npos) << first;
  // The retry carried the first attempt's feedback in its prompt.
  bool carried = false;
  for (auto& r : mock->requests())
    if (r["headers"].value("x-loopr-loop-id", "") == "code-001-001-001" &&
        r["body"].dump().find("iteration 3 of 4") != std::string::npos &&
        r["body"].dump().find("first attempt") != std::string::npos)
      carried = true;
  EXPECT_TRUE(carried);
}

TEST_F(DaemonHierarchyTest, PauseResumeAndStopActOnALoopAndItsDescendants) {
  TreeScript script;
  script.code_iterations = 3;
  script.code_delay = "300ms";
  start_tree_daemon(script);
  submit("Slow code");
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));
  // Not allowed at the gate: pause/resume/stop of nothing running → 409; unknown → 404.
  EXPECT_EQ(api("POST", "/v1/loops/001/resume").status, 409);
  EXPECT_EQ(api("POST", "/v1/loops/009/pause").status, 404);
  ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);
  ASSERT_TRUE(wait_loops([](auto& l) { return count_status(l, "running") >= 3 && l.count("code-001-001-001"); }))
      << dump_loops();

  ASSERT_EQ(api("POST", "/v1/loops/001/pause").status, 200);
  ASSERT_TRUE(wait_loops([](auto& l) {
    return count_status(l, "running") == 0 && count_status(l, "rebasing") == 0 && count_status(l, "paused") >= 1;
  }, std::chrono::seconds(30)))
      << dump_loops();
  auto paused = loops(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  // Paused loops stay where they are. A loop that completed as the pause came may still spawn its
  // children (they start paused, after the snapshot above): they must not have run either.
  for (auto& [id, l] : loops(true))
    if (l["status"] == "paused") {
      auto before = paused.find(id);
      if (before != paused.end())
        EXPECT_EQ(l["iteration"], before->second["iteration"]) << id;
      else
        EXPECT_EQ(l["iteration"], 0) << id << " was spawned paused and ran anyway";
    }

  ASSERT_EQ(api("POST", "/v1/loops/001/resume").status, 200);
  // Stop one code loop while it runs (one with an iteration still to go, so that it cannot
  // complete first on a loaded machine): it ends within 2 s; resume continues it.
  std::string victim;
  ASSERT_TRUE(wait_loops([&](std::map<std::string, nlohmann::json>& l) {
    for (auto& [id, x] : l)
      if (id.rfind("code-", 0) == 0 && x["status"] == "running" && x.value("iteration", 9) < 2) {
        victim = id;
        return true;
      }
    return false;
  })) << dump_loops();
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(api("POST", "/v1/loops/" + victim + "/stop").status, 200);
  ASSERT_TRUE(wait_status(victim, "stopped", std::chrono::seconds(5))) << victim << "\n"
                                                                       << dump_loops();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  ASSERT_EQ(api("POST", "/v1/loops/" + victim + "/resume").status, 200);
  ASSERT_TRUE(wait_until([&] { return git("show main:code/code-001-002-002.txt").find("made by") != std::string::npos; },
                         std::chrono::seconds(90)))
      << dump_loops();
  EXPECT_EQ(git("show main:code/" + victim + ".txt"), "made by " + victim + "\n");
}

// Issue 32: a loop whose work meets nothing that landed is not moved at its boundary (no
// `rebasing`, no checkout of the others' work per iteration); its merge joins the two.
TEST_F(DaemonHierarchyTest, ALoopWhoseWorkMeetsNothingThatLandedIsNotRebased) {
  TreeScript script;
  script.specs = {"alpha"};
  script.extra_rules = b_slow_a_edits_line_1();
  start_tree_daemon(script);
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("Write two files"));
  ASSERT_TRUE(wait_until([&] { return git("show main:code/code-001-001-002.txt").find("made by") != std::string::npos; },
                         std::chrono::seconds(60)))
      << dump_loops();
  EXPECT_NE(git("show main:shared.txt").find("line 1 by A"), std::string::npos);
  std::vector<daemon::SseMessage> events;
  auto s = client().stream("/v1/events?since=0&loop=code-001-001-002", [&](const daemon::SseMessage& m) {
    events.push_back(m);
    return m.event != "merged";
  });
  ASSERT_TRUE(s.ok());
  int iterations = 0;
  for (auto& e : events) {
    EXPECT_NE(e.event, "rebased") << e.data;
    EXPECT_EQ(e.data.find("\"to\":\"rebasing\""), std::string::npos) << e.data;
    iterations += e.event == "iteration_started";
  }
  // It met A's merge at a boundary (its first iteration failed after A landed), and its merge
  // joined the two lines of work.
  EXPECT_GE(iterations, 2) << dump_loops();
  ASSERT_FALSE(events.empty());
  EXPECT_NE(events.back().data.find("\"kind\":\"merged\""), std::string::npos) << events.back().data;
}
