// The integration gate through a real daemon: two code loops that each pass alone but clash once
// merged never reach the base branch. A fix loop repairs the integration branch (one test); in
// the other it cannot, the plan is blocked with the output, `merge` refuses the red tip, and a
// person's fix on the integration branch plus `resume` (or `merge --force`) lands it.
#include "daemon/daemon_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;
using nlohmann::json;

namespace {

// check.sh fails when both halves are there without the fix (the clash only the combination
// shows), and while any wip file says WIP (as the fixture's check does).
const char* kClashCheck =
    "if grep -rqs WIP wip; then echo 'still WIP:'; grep -rl WIP wip; exit 1; fi\n"
    "if [ -e code/code-001-001-001.txt ] && [ -e code/code-001-001-002.txt ] && [ ! -e fixed.txt ]; "
    "then echo 'CLASH: part one and part two do not fit together'; exit 1; fi\n"
    "echo ok\n";

// Code loop A answers after 1.5 s, B after 4 s: both start from the same integration tip, A
// merges first, and B (validated alone on its own branch) merges cleanly beside it.
std::string code_rules(const std::string& fix_content, const std::string& fix_path) {
  auto code = [](const std::string& id, const std::string& delay) {
    return "  - name: code-" + id + "\n    match: {loop_id: \"^" + id + "$\", turn: 1}\n    reply:\n"
           "      fault: {delay: " + delay + "}\n"
           "      tool_use:\n"
           "        - name: write_file\n"
           "          input: {path: \"code/{{loop_id}}.txt\", content: \"made by {{loop_id}}\\n\"}\n"
           "        - name: write_file\n"
           "          input: {path: \"wip/{{loop_id}}.txt\", content: \"done\\n\"}\n";
  };
  return code("code-001-001-001", "1500ms") + code("code-001-001-002", "4000ms") +
         "  - name: fix\n    match: {loop_id: \"^fix-001-\", turn: 1}\n    reply:\n"
         "      tool_use:\n        name: write_file\n        input: {path: \"" + fix_path +
         "\", content: \"" + fix_content + "\\n\"}\n";
}

class IntegrationGateTest : public DaemonFixture {
 protected:
  void start(const std::string& fix_content, const std::string& fix_path,
             const std::string& config_extra = {}) {
    make_repo(config_extra);
    write_file(dir / "check.sh", kClashCheck);
    auto commit = run_command("git add -A && git commit -q -m 'the clash check'", dir.str());
    ASSERT_EQ(commit.exit_code, 0) << commit.output;
    TreeScript script;
    script.specs = {"alpha"};
    script.phases = 2;
    script.extra_rules = code_rules(fix_content, fix_path);
    start_mock(script);
    start_daemon();
    ASSERT_EQ(submit("Write both halves"), "001");
    ASSERT_TRUE(wait_status("001", "awaiting_approval")) << dump_loops();
    auto approved = api("POST", "/v1/loops/001/approve");
    ASSERT_EQ(approved.status, 200) << approved.body.dump();
  }

  json plan_row() {
    auto l = loops(true);
    return l.count("001") ? l["001"] : json::object();
  }

  bool main_passes() { return base_passes(); }
};

}  // namespace

TEST_F(IntegrationGateTest, AFixLoopRepairsTheCombinationBeforeAnythingReachesTheBaseBranch) {
  start("fixed", "fixed.txt");
  ASSERT_TRUE(wait_until([&] { return plan_row().value("tree_verdict", "") == "merged"; },
                         std::chrono::seconds(90)))
      << dump_loops() << git("log --oneline --graph --all");
  // Both code loops passed alone (one iteration each); the fix loop made the combination pass.
  auto all = loops(true);
  ASSERT_TRUE(all.count("fix-001-001")) << dump_loops();
  EXPECT_EQ(all["fix-001-001"]["status"], "complete");
  EXPECT_EQ(all["fix-001-001"]["parent_id"], "001");
  EXPECT_EQ(all["code-001-001-001"]["status"], "complete");
  EXPECT_EQ(all["code-001-001-002"]["status"], "complete");
  EXPECT_EQ(all["code-001-001-002"]["iteration"], 1) << "B passed alone on its own branch";

  // The fix loop's first prompt carried the failing output and the loops merged.
  std::string prompt = read_file(paths().iteration_dir("fix-001-001", 1) / "prompt.md");
  EXPECT_NE(prompt.find("CLASH: part one and part two do not fit together"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("code-001-001-001"), std::string::npos);
  EXPECT_NE(prompt.find("code-001-001-002"), std::string::npos);
  EXPECT_NE(prompt.find("Integration fix loop fix-001-001"), std::string::npos);

  // The base branch got the repaired combination, and its tests pass.
  EXPECT_EQ(git("show main:fixed.txt"), "fixed\n");
  EXPECT_EQ(git("show main:code/code-001-001-002.txt"), "made by code-001-001-002\n");
  EXPECT_TRUE(main_passes());
  json plan = plan_row();
  ASSERT_TRUE(plan["integration"].is_object()) << plan.dump();
  EXPECT_EQ(plan["integration"]["result"], "passed");
  EXPECT_EQ(plan["integration"]["fix_loops"], 1);
  EXPECT_EQ(plan["integration"]["sha"], git("rev-parse loopr/001").substr(0, 40));

  // The history: a failing check, the fix loop, a passing check, then the tree and the merge.
  std::vector<std::string> kinds;
  std::vector<json> checks;
  (void)client().stream("/v1/events?since=0&follow=false", [&](const daemon::SseMessage& m) {
    kinds.push_back(m.event);
    if (m.event == "integration_check") checks.push_back(json::parse(m.data));
    return true;
  });
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_FALSE(checks[0]["data"]["passed"].get<bool>()) << checks[0].dump();
  EXPECT_TRUE(checks[1]["data"]["passed"].get<bool>()) << checks[1].dump();
  auto at = [&](const std::string& k) {
    return std::find(kinds.begin(), kinds.end(), k) - kinds.begin();
  };
  EXPECT_LT(at("integration_fix"), at("tree_complete"));
  // The gate's worktree is gone; its log stays.
  EXPECT_EQ(git("worktree list").find("001-gate"), std::string::npos) << git("worktree list");
  EXPECT_TRUE(std::filesystem::exists(dir / plan["integration"]["log"].get<std::string>()));
}

TEST_F(IntegrationGateTest, AFixLoopThatCannotRepairItBlocksThePlanAndThePersonDecides) {
  start("no help", "notes.txt", "integration: {max_fix_iterations: 2}\n");
  ASSERT_TRUE(wait_until([&] { return plan_row().value("tree_verdict", "") == "integration_failed"; },
                         std::chrono::seconds(90)))
      << dump_loops();
  json plan = plan_row();
  EXPECT_EQ(plan["status"], "blocked");
  std::string reason = plan["status_reason"];
  EXPECT_NE(reason.find("fix-001-001 failed"), std::string::npos) << reason;
  EXPECT_NE(reason.find("loopr resume 001"), std::string::npos) << reason;
  EXPECT_NE(reason.find("loopr merge --force 001"), std::string::npos) << reason;
  EXPECT_NE(plan["integration"]["output"].get<std::string>().find("CLASH"), std::string::npos);
  EXPECT_EQ(loops(true)["fix-001-001"]["status"], "failed");
  EXPECT_EQ(loops(true)["fix-001-001"]["iteration"], 2) << "integration.max_fix_iterations";
  EXPECT_FALSE(loops(true).count("fix-001-002")) << "one fix loop, then a person";
  // Nothing reached the base branch.
  EXPECT_NE(git("show main:code/code-001-001-001.txt").find("does not exist"), std::string::npos);
  EXPECT_TRUE(main_passes());

  // `loopr merge` refuses the red tip (409, exit 5 in the CLI) and says what to do.
  auto refused = api("POST", "/v1/plans/001/merge");
  EXPECT_EQ(refused.status, 409) << refused.body.dump();
  EXPECT_NE(refused.body.dump().find("--force"), std::string::npos) << refused.body.dump();

  // A person fixes the integration branch by hand; `resume` checks it again and it lands.
  std::string where = shell_quote(dir.str() + "-hand-fix");
  auto fixed = run_command("git worktree add -q " + where + " loopr/001 && cd " + where +
                               " && echo fixed > fixed.txt && git add fixed.txt && "
                               "git commit -q -m 'fix the clash by hand' && cd " +
                               shell_quote(dir.str()) + " && git worktree remove " + where,
                           dir.str());
  ASSERT_EQ(fixed.exit_code, 0) << fixed.output;
  auto resumed = api("POST", "/v1/loops/001/resume");
  ASSERT_EQ(resumed.status, 200) << resumed.body.dump();
  ASSERT_TRUE(wait_until([&] { return plan_row().value("tree_verdict", "") == "merged"; },
                         std::chrono::seconds(30)))
      << dump_loops();
  EXPECT_EQ(plan_row()["status"], "complete");
  EXPECT_EQ(plan_row()["integration"]["result"], "passed");
  EXPECT_EQ(git("show main:fixed.txt"), "fixed\n");
  EXPECT_TRUE(main_passes());
  EXPECT_EQ(loops(true)["fix-001-001"]["status"], "invalidated") << "superseded by the person";
}

TEST_F(IntegrationGateTest, MergeForceLandsARedTipOnlyWhenThePersonSaysSo) {
  base_may_fail = true;  // the person merges a red tip on purpose
  start("no help", "notes.txt", "integration: {max_fix_iterations: 1}\n");
  ASSERT_TRUE(wait_until([&] { return plan_row().value("tree_verdict", "") == "integration_failed"; },
                         std::chrono::seconds(90)))
      << dump_loops();
  auto forced = api("POST", "/v1/plans/001/merge?force=1");
  ASSERT_EQ(forced.status, 200) << forced.body.dump();
  EXPECT_EQ(plan_row()["tree_verdict"], "merged");
  EXPECT_EQ(plan_row()["integration"]["result"], "forced");
  EXPECT_EQ(git("show main:code/code-001-001-002.txt"), "made by code-001-001-002\n");
  EXPECT_FALSE(main_passes()) << "the person merged a red tip on purpose";
}

// Issue 14: a tree whose changes touch loopr's own settings or prompts is not merged on its own.
TEST_F(IntegrationGateTest, ATreeThatChangesLooprsOwnPromptsWaitsForThePersonsMerge) {
  TreeScript script = one_part_script();
  script.extra_rules =
      "  - name: code-sneaky\n    match: {loop_type: code, turn: 1}\n    reply:\n"
      "      tool_use:\n"
      "        - name: run_command\n"
      "          input: {command: \"mkdir -p .loopr/prompts && echo '# obey the file' > .loopr/prompts/code.md\"}\n"
      "        - name: write_file\n"
      "          input: {path: \"code/{{loop_id}}.txt\", content: \"made by {{loop_id}}\\n\"}\n";
  start_tree_daemon(script);
  ASSERT_EQ(submit("Write the file"), "001");
  ASSERT_TRUE(wait_status("001", "awaiting_approval")) << dump_loops();
  ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);
  ASSERT_TRUE(wait_until([&] { return plan_row().value("tree_verdict", "") == "merge_failed"; },
                         std::chrono::seconds(60)))
      << dump_loops();
  json plan = plan_row();
  EXPECT_EQ(plan["status"], "blocked");
  EXPECT_NE(plan["status_reason"].get<std::string>().find(".loopr/prompts/code.md"), std::string::npos)
      << plan.dump();
  EXPECT_NE(plan["merge_error"].get<std::string>().find("loopr merge 001"), std::string::npos);
  EXPECT_NE(git("show main:code/code-001-001-001.txt").find("does not exist"), std::string::npos)
      << "nothing reached the base branch";
  EXPECT_EQ(api("POST", "/v1/loops/001/resume").status, 409) << "resume would run the plan again";

  auto merged = api("POST", "/v1/plans/001/merge");
  ASSERT_EQ(merged.status, 200) << merged.body.dump();
  EXPECT_EQ(plan_row()["status"], "complete");
  EXPECT_EQ(plan_row()["tree_verdict"], "merged");
  EXPECT_EQ(git("show main:.loopr/prompts/code.md"), "# obey the file\n");
}

// A loop whose work has to be rebased at merge time runs its validation again before it is
// merged: loop B repeats A's change (already on the integration branch) and changes it again, so
// its merge conflicts but its rebase does not; rebased beside A's work it fails, goes back to
// work with the output, and is merged only once it passes there.
TEST_F(IntegrationGateTest, ALoopRebasedAtMergeTimeIsValidatedAgainBeforeItIsMerged) {
  make_repo();
  write_file(dir / "check.sh",
             "if grep -rqs WIP wip; then echo 'still WIP'; exit 1; fi\n"
             "if [ -e a.txt ] && [ \"$(cat f.txt 2>/dev/null)\" = two ]; then "
             "echo 'TWO-WITH-A: f.txt says two beside a.txt'; exit 1; fi\necho ok\n");
  ASSERT_EQ(run_command("git add -A && git commit -q -m check", dir.str()).exit_code, 0);
  auto writes = [](const std::vector<std::pair<std::string, std::string>>& files) {
    std::string y = "      tool_use:\n";
    for (const auto& [path, content] : files)
      y += "        - name: write_file\n          input: {path: \"" + path + "\", content: \"" +
           content + "\\n\"}\n";
    return y;
  };
  const std::string a = "code-001-001-001", b = "code-001-001-002";
  TreeScript script;
  script.specs = {"alpha"};
  script.phases = 2;
  script.extra_rules =
      "  - name: a\n    match: {loop_id: \"^" + a + "$\", turn: 1}\n    reply:\n"
      "      fault: {delay: 2500ms}\n" + writes({{"a.txt", "a"}, {"f.txt", "one"}}) +
      "  - name: b1\n    match: {loop_id: \"^" + b + "$\", turn: 1, first_user: \"iteration 1 of\"}\n"
      "    reply:\n" + writes({{"f.txt", "one"}, {"wip/b.txt", "WIP"}}) +
      "  - name: b2\n    match: {loop_id: \"^" + b + "$\", turn: 1, first_user: \"iteration 2 of\"}\n"
      "    reply:\n      fault: {delay: 5000ms}\n" + writes({{"f.txt", "two"}, {"wip/b.txt", "done"}}) +
      "  - name: b3\n    match: {loop_id: \"^" + b + "$\", turn: 1}\n    reply:\n" +
      writes({{"f.txt", "three"}});
  start_mock(script);
  start_daemon();
  ASSERT_EQ(submit("Write f"), "001");
  ASSERT_TRUE(wait_status("001", "awaiting_approval")) << dump_loops();
  ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);
  ASSERT_TRUE(wait_until([&] { return plan_row().value("tree_verdict", "") == "merged"; },
                         std::chrono::seconds(90)))
      << dump_loops();
  std::vector<json> revalidated;
  (void)client().stream("/v1/events?since=0&follow=false", [&](const daemon::SseMessage& m) {
    if (m.event == "revalidated") revalidated.push_back(json::parse(m.data));
    return true;
  });
  // Failed once after the rebase; its next iteration starts from the new tip, so that one merges
  // without another rebase.
  ASSERT_EQ(revalidated.size(), 1u) << dump_loops() << git("log --oneline --graph --all");
  EXPECT_EQ(revalidated[0]["loop_id"], b);
  EXPECT_FALSE(revalidated[0]["data"]["passed"].get<bool>());
  EXPECT_EQ(loops(true)[b]["iteration"], 3);
  std::string prompt = read_file(paths().iteration_dir(b, 3) / "prompt.md");
  EXPECT_NE(prompt.find("TWO-WITH-A"), std::string::npos) << prompt;
  EXPECT_EQ(git("show main:f.txt"), "three\n");
  EXPECT_TRUE(main_passes());
}
