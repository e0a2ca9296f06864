// A daemon killed at each step of a tree's end — the last loop's completion, its merge into the
// integration branch and its worktree's removal, the integration gate, the tree marked complete,
// the merge into the base branch — always finishes the tree after a restart: every loop complete, the base branch merged exactly once, nothing
// merged twice, no worktree left behind. The kill is a SIGKILL the daemon sends itself at a named
// crash point (core/crash_point.hpp), so each step is hit every run, not by chance.
#include <sys/wait.h>

#include <csignal>

#include <loopr/manager/owed_steps.hpp>
#include <loopr/store/task_store.hpp>

#include "daemon/daemon_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;
using nlohmann::json;

namespace {

const std::vector<std::string> kCodeLoops = {"code-001-001-001", "code-001-001-002",
                                             "code-001-002-001", "code-001-002-002"};

using manager::Owed;

// What the store says the tree owes after a kill at each step (manager/owed_steps.hpp): the
// step the kill cut short, by kind (which of the last code loops is the eleventh varies).
const std::map<std::string, std::set<Owed>> kOwedAfterTheKill = {
    {"loop-complete#11", {Owed::merge_into_integration, Owed::retire_folder}},
    {"integration-merged#11", {Owed::merge_into_integration, Owed::retire_folder}},
    {"worktree-retired#11", {Owed::retire_folder, Owed::check_gate}},
    {"gate-started", {Owed::check_gate}},
    {"gate-worktree", {Owed::check_gate}},
    {"gate-passed", {Owed::check_gate}},
    {"tree-complete", {Owed::merge_into_base}},
    {"base-merged", {Owed::merge_into_base}},
    {"loop-complete#1", {Owed::merge_into_integration, Owed::spawn_children, Owed::retire_folder}},
    {"integration-merged#1",
     {Owed::merge_into_integration, Owed::spawn_children, Owed::retire_folder}},
    {"worktree-retired#1", {Owed::spawn_children, Owed::retire_folder}},
};

}  // namespace

class TreeEndFaultTest : public DaemonFixture, public ::testing::WithParamInterface<const char*> {
 protected:
  json plan_row() {
    auto l = loops(true);
    return l.count("001") ? l["001"] : json::object();
  }

  // How many commits of `branch` carry this subject prefix (a merge made twice shows up twice).
  int commits_with(const std::string& branch, const std::string& prefix) {
    std::string log = git("log --format=%s " + branch);
    int n = 0;
    std::size_t at = 0;
    while ((at = log.find(prefix, at)) != std::string::npos) {
      ++n;
      at += prefix.size();
    }
    return n;
  }

  // The kinds of step plan 001's tree owes, read from the store of a daemon that is not running
  // (an empty set with the text of an error when the store cannot be read).
  std::pair<std::set<Owed>, std::string> owed_by_the_tree() {
    auto store = TaskStore::open((dir / ".loopr" / "state").string());
    if (!store) return {{}, "the store: " + store.error().message};
    auto tree = (*store)->loops_of_plan("001");
    if (!tree) return {{}, "the tree: " + tree.error().message};
    std::set<Owed> kinds;
    std::string named;
    for (const auto& o : manager::owed_steps(*tree, MergeMode::automatic)) {
      kinds.insert(o.step);
      named += o.loop_id + ": " + manager::to_string(o.step) + "\n";
    }
    return {kinds, named};
  }

  // The daemon ends by its own SIGKILL at the crash point; returns how it ended.
  std::string wait_for_the_crash() {
    int status = 0;
    bool died = wait_until([&] { return ::waitpid(daemon_pid, &status, WNOHANG) == daemon_pid; },
                           std::chrono::seconds(120));
    if (!died) return "still running";
    daemon_pid = -1;
    if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGKILL ? "SIGKILL" : "signal";
    return "exit " + std::to_string(WEXITSTATUS(status));
  }
};

TEST_P(TreeEndFaultTest, ARestartAfterAKillAtThisStepFinishesTheTreeOnce) {
  make_repo();
  TreeScript script;  // plan → 2 specs → 2 phases each → 1 code loop each: 11 loops
  start_mock(script);
  crash_at = GetParam();
  start_daemon();
  submit("Crash at the tree's end");
  ASSERT_TRUE(wait_status("001", "awaiting_approval")) << dump_loops();
  ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);

  ASSERT_EQ(wait_for_the_crash(), "SIGKILL")
      << "the daemon never reached the crash point " << crash_at << "\n"
      << tail_log();
  // It died at the step: before `base-merged`, the tree is not in the base branch yet.
  if (std::string(GetParam()) != "base-merged") {
    EXPECT_EQ(git("show main:code/code-001-002-002.txt").find("made by"), std::string::npos);
  }

  // What is owed is that step, as the records say, before any restart.
  auto [owed, named] = owed_by_the_tree();
  EXPECT_EQ(owed, kOwedAfterTheKill.at(GetParam())) << "owed after the kill:\n" << named;

  crash_at.clear();
  start_daemon();
  ASSERT_TRUE(wait_until([&] { return plan_row().value("tree_verdict", "") == "merged"; },
                         std::chrono::seconds(120)))
      << "after a kill at " << GetParam() << " the restarted daemon never merged the tree:\n"
      << plan_row().dump() << "\n"
      << dump_loops() << git("log --oneline --graph --all -30");

  auto all = loops(true);
  EXPECT_EQ(all.size(), 11u) << dump_loops();
  for (auto& [id, l] : all) EXPECT_EQ(l["status"], "complete") << id << "\n" << dump_loops();
  for (const auto& id : kCodeLoops) {
    EXPECT_EQ(git("show main:code/" + id + ".txt"), "made by " + id + "\n");
    EXPECT_EQ(commits_with("loopr/001", "loopr(" + id + "): merge"), 1)
        << id << " merged into the integration branch other than once:\n"
        << git("log --oneline loopr/001");
  }
  // The base branch has the whole integration branch, received once (a fast-forward here, or
  // one merge commit when the base moved meanwhile).
  EXPECT_EQ(run_command("git merge-base --is-ancestor loopr/001 main", dir.str()).exit_code, 0)
      << git("log --oneline --graph --all -30");
  EXPECT_LE(commits_with("main", "loopr(001): merge plan 001"), 1) << git("log --oneline main");
  for (const auto& id : kCodeLoops)
    EXPECT_EQ(commits_with("main", "loopr(" + id + "): merge"), 1) << git("log --oneline main");
  std::string tip = git("rev-parse main");
  EXPECT_EQ(plan_row().value("merged_into_base", std::string()), tip.substr(0, tip.find('\n')));
  // The repository is sound, and no loop's worktree, nor the integration gate's, outlives the
  // tree.
  expect_sound_repo_and_no_worktree_left();
  // The person's checkout of main has the merged files, and nothing uncommitted.
  EXPECT_TRUE(std::filesystem::exists(dir / "code" / "code-001-002-002.txt"));
  EXPECT_EQ(git("status --porcelain --untracked-files=no"), "");
  // And the store agrees: the tree owes nothing once the daemon has stopped.
  EXPECT_EQ(stop_daemon().first, 0);
  auto [left, left_named] = owed_by_the_tree();
  EXPECT_TRUE(left.empty() && left_named.empty()) << "still owed:\n" << left_named;
}

std::string step_name(const ::testing::TestParamInfo<const char*>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

// `#11`: the 11th pass is the tree's last loop (its completion, merge, worktree removal).
INSTANTIATE_TEST_SUITE_P(EachStep, TreeEndFaultTest,
                         ::testing::Values("loop-complete#11", "integration-merged#11",
                                           "worktree-retired#11", "gate-started", "gate-worktree",
                                           "gate-passed", "tree-complete", "base-merged"),
                         step_name);

// `#1`: the approved plan's own completion (issue 44 R4: the approval carries its record along,
// and its worktree's folder goes before the write that stores the children and clears it).
INSTANTIATE_TEST_SUITE_P(ApprovalStep, TreeEndFaultTest,
                         ::testing::Values("loop-complete#1", "integration-merged#1",
                                           "worktree-retired#1"),
                         step_name);
