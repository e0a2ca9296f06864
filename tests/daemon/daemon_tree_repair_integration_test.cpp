// Every tree state has a way out (issue 15), through a real daemon and the real mock model:
// a failed phase or spec that the person iterates invalidates its descendants, gets a fresh
// generation of children, and the tree completes and lands; `attended: true` pauses after
// passing iterations too, before anything builds on them; `limits.max_runtime` counts from the
// approval, not from the submit (the wait at the gate is the person's time).
#include <thread>

#include "daemon/daemon_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;
using nlohmann::json;

namespace {

// code-001-001-001 (the first generation's only) never gets past WIP; every later code loop
// passes at once (the fixture's `code` rule).
const char* kStuckFirstCode =
    "  - name: stuck\n    match: {loop_id: \"^code-001-001-001$\", turn: 1}\n    reply:\n      "
    "tool_use:\n"
    "        name: write_file\n        input: {path: wip/code-001-001-001.txt, content: \"WIP "
    "{{n}}\\n\"}\n";

class TreeRepairTest : public DaemonFixture {
 protected:
  // A plan with one spec of two phases whose first code loop fails for good (two attempts of two
  // iterations); its failure rolls up to the phase, the spec and the plan.
  void fail_the_first_code_loop() {
    make_repo();
    TreeScript script;
    script.specs = {"alpha"};
    script.extra_rules = kStuckFirstCode;
    start_mock(script);
    std::string cfg = read_file(dir / ".loopr/config.yml");
    cfg.replace(cfg.find("max_iterations: 6"), 17, "max_iterations: 2");
    write_file(dir / ".loopr/config.yml", cfg);
    start_daemon();
    ASSERT_EQ(submit("Two parts"), "001");
    ASSERT_TRUE(wait_status("001", "awaiting_approval")) << dump_loops();
    ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);
    ASSERT_TRUE(wait_loops(
        [](auto& l) {
          return l.count("001") && l["001"]["status"] == "failed" && l.count("code-001-001-002") &&
                 l["code-001-001-002"]["status"] == "complete";
        },
        std::chrono::seconds(90)))
        << dump_loops();
    auto all = loops(true);
    ASSERT_EQ(all["001-001-001"]["status"], "failed") << dump_loops();
    ASSERT_EQ(all["001-001"]["status"], "failed");
    ASSERT_EQ(all["001"]["tree_verdict"], "failed");
  }

  // A plan with one spec of one phase, submitted with `config_extra` and waiting at the gate.
  void one_part_at_the_gate(const std::string& config_extra, const std::string& request) {
    TreeScript script = one_part_script();
    start_tree_daemon(script, config_extra);
    ASSERT_EQ(submit(request), "001");
    ASSERT_TRUE(wait_status("001", "awaiting_approval")) << dump_loops();
  }

  json row(const std::string& id) {
    auto l = loops(true);
    return l.count(id) ? l[id] : json::object();
  }

  bool merged() {
    return wait_until([&] { return row("001").value("tree_verdict", "") == "merged"; },
                      std::chrono::seconds(90));
  }
};

}  // namespace

TEST_F(TreeRepairTest, AFailedPhaseIteratedToSuccessEndsInACompleteMergedTree) {
  fail_the_first_code_loop();
  auto iterated = api("POST", "/v1/loops/001-001-001/iterate", {{"feedback", "Smaller steps."}});
  ASSERT_EQ(iterated.status, 200) << iterated.body.dump();
  ASSERT_TRUE(merged()) << dump_loops() << git("log --oneline --graph --all");

  auto all = loops(true);
  // The old code loop is invalidated; the phase's next generation has a fresh id and passed.
  EXPECT_EQ(all["code-001-001-001"]["status"], "invalidated");
  ASSERT_TRUE(all.count("code-001-001-001-002")) << dump_loops();
  EXPECT_EQ(all["code-001-001-001-002"]["status"], "complete");
  EXPECT_EQ(all["code-001-001-001-002"]["parent_id"], "001-001-001");
  // The ancestors its failure had rolled up to are complete again, and so is the tree.
  EXPECT_EQ(all["001-001-001"]["status"], "complete");
  EXPECT_EQ(all["001-001"]["status"], "complete");
  EXPECT_EQ(all["001"]["status"], "complete");
  EXPECT_EQ(git("show main:code/code-001-001-001-002.txt"), "made by code-001-001-001-002\n");
  EXPECT_EQ(git("show main:code/code-001-001-002.txt"), "made by code-001-001-002\n");
  // The phase's second run carried the person's feedback.
  bool feedback_seen = false;
  for (auto& r : mock->requests())
    if (r["headers"].value("x-loopr-loop-id", "") == "001-001-001" &&
        r["body"].dump().find("Smaller steps.") != std::string::npos)
      feedback_seen = true;
  EXPECT_TRUE(feedback_seen);
}

TEST_F(TreeRepairTest, AFailedSpecIteratedToSuccessEndsInACompleteMergedTree) {
  fail_the_first_code_loop();
  auto iterated = api("POST", "/v1/loops/001-001/iterate", {{"feedback", "Try it again."}});
  ASSERT_EQ(iterated.status, 200) << iterated.body.dump();
  ASSERT_TRUE(merged()) << dump_loops() << git("log --oneline --graph --all");

  auto all = loops(true);
  // Every descendant of the first generation is invalidated, the next one has fresh ids.
  for (const char* old : {"001-001-001", "001-001-002", "code-001-001-001", "code-001-001-002"})
    EXPECT_EQ(all[old]["status"], "invalidated") << old;
  for (const char* fresh : {"001-001-003", "001-001-004", "code-001-001-003", "code-001-001-004"}) {
    ASSERT_TRUE(all.count(fresh)) << fresh << "\n" << dump_loops();
    EXPECT_EQ(all[fresh]["status"], "complete") << fresh;
  }
  EXPECT_EQ(all["001-001"]["status"], "complete");
  EXPECT_EQ(all["001"]["status"], "complete");
  EXPECT_EQ(git("show main:code/code-001-001-003.txt"), "made by code-001-001-003\n");
  EXPECT_EQ(git("show main:code/code-001-001-004.txt"), "made by code-001-001-004\n");
}

TEST_F(TreeRepairTest, AttendedModePausesAfterPassingIterationsBeforeAnythingBuildsOnThem) {
  ASSERT_NO_FATAL_FAILURE(one_part_at_the_gate("attended: true\n", "One part"));
  ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);

  // The spec passed its first iteration and waits: no phase exists yet.
  ASSERT_TRUE(wait_status("001-001", "paused")) << dump_loops();
  json spec = row("001-001");
  EXPECT_EQ(spec["iteration"], 1);
  EXPECT_NE(spec["status_reason"].get<std::string>().find("iteration 1 passed"), std::string::npos)
      << spec.dump();
  EXPECT_FALSE(loops(true).count("001-001-001"));
  ASSERT_EQ(api("POST", "/v1/loops/001-001/resume").status, 200);

  // Resumed: it completes without another model call and its phase spawns, which waits too.
  ASSERT_TRUE(wait_status("001-001-001", "paused")) << dump_loops();
  EXPECT_EQ(row("001-001")["status"], "complete");
  EXPECT_EQ(row("001-001")["iteration"], 1);
  EXPECT_FALSE(loops(true).count("code-001-001-001"));
  ASSERT_EQ(api("POST", "/v1/loops/001-001-001/resume").status, 200);

  // The code loop passed and waits: nothing of it is in the integration branch yet.
  ASSERT_TRUE(wait_status("code-001-001-001", "paused")) << dump_loops();
  EXPECT_NE(git("show loopr/001:code/code-001-001-001.txt").find("fatal"), std::string::npos);
  // `iterate` sends a passing loop back to work with the feedback; it pauses again after.
  ASSERT_EQ(
      api("POST", "/v1/loops/code-001-001-001/iterate", {{"feedback", "Add a comment."}}).status,
      200);
  ASSERT_TRUE(wait_loops([](auto& l) {
    return l["code-001-001-001"]["status"] == "paused" && l["code-001-001-001"]["iteration"] == 2;
  })) << dump_loops();
  ASSERT_EQ(api("POST", "/v1/loops/code-001-001-001/resume").status, 200);
  ASSERT_TRUE(merged()) << dump_loops();
  EXPECT_EQ(row("code-001-001-001")["iteration"], 2);
  EXPECT_EQ(git("show main:code/code-001-001-001.txt"), "made by code-001-001-001\n");
}

TEST_F(TreeRepairTest, MaxRuntimeCountsFromTheApprovalNotFromTheSubmit) {
  ASSERT_NO_FATAL_FAILURE(one_part_at_the_gate("limits:\n  max_runtime: 5s\n", "Wait at the gate"));
  // The person takes longer than the whole runtime limit to decide.
  std::this_thread::sleep_for(std::chrono::milliseconds(5500));
  ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);
  ASSERT_TRUE(merged()) << dump_loops();
  for (auto& [id, l] : loops(true))
    EXPECT_EQ(l["status"], "complete") << id << ": " << l.value("status_reason", "");
}
