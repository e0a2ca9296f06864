// What an iteration knows of its worktree without walking it (issue 32): after a checkpoint that
// nothing wrote over, the next prompt's state comes from git objects alone; whatever a command
// wrote since is still seen (and committed), because then the worktree is read whole.
#include <gtest/gtest.h>

#include <loopr/core/clean_checkpoint.hpp>
#include <loopr/core/sweep_handoff.hpp>
#include <loopr/git/clean_changes.hpp>
#include <loopr/git/work_tree_state.hpp>
#include <loopr/store/store_writes.hpp>

#include "support/fakes/engine_kit.hpp"
#include "support/fakes/model_scripts.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

const std::map<std::string, std::string> kProject = {{"README", "a project\n"}};

// Every iteration writes one new file through write_file, then ends its turn.
const std::string kOneFileEach = code_turns(
    R"([{name: write_file, input: {path: "work/{{n}}.txt", content: "iteration {{n}}\n"}}])");

// The turn-1 prompts of loop `id`, in order.
std::vector<std::string> prompts_of(EngineKit& h, const std::string& id) {
  std::vector<std::string> out;
  for (const auto& r : h.requests_of(id))
    if (r["body"]["messages"].size() == 1) out.push_back(first_user_text(r));
  return out;
}

// The protected harness of the hostile tests: their tests (`sh check.sh`) pass from iteration 3.
const char* kHarness = "test \"$LOOPR_ITERATION\" -ge 3\n";

// A code loop's two iterations in `h` whose tests are `sh check.sh`, in the sandbox: what it ended
// as, its iteration records, and how many protection checks read no walk (from a clean checkpoint).
struct TwoIterations {
  Loop done;
  std::vector<IterationRecord> recs;
  std::uint64_t fast_reads = 0;
};

TwoIterations run_two(EngineKit& h) {
  EXPECT_TRUE(h.config->sandbox.confined());
  h.config->loops[LoopType::code].validation = "sh check.sh";
  Loop loop = h.add_loop("code-001-001-001", LoopType::code, "Write files", 2);
  const std::uint64_t fast = git::changes_read_from_checkpoint();
  TwoIterations out{h.run(loop.id), {}, 0};
  out.fast_reads = git::changes_read_from_checkpoint() - fast;
  out.recs = h.iterations(loop.id);
  EXPECT_EQ(out.done.iteration, 2) << out.done.status_reason;
  return out;
}

}  // namespace

TEST(WorkTreeReadsTest, AfterTheFirstIterationTheStateIsNotReadFromTheWorktree) {
  EngineKit h(kOverLoopback, kOneFileEach, kProject);
  h.config->loops[LoopType::code].validation = "test \"$LOOPR_ITERATION\" -ge 3";
  Loop loop = h.add_loop("code-001-001-001", LoopType::code, "Write three files", 5);
  // Its work starts where main is (as a daemon's loop starts at its integration tip), so its
  // prompt shows the whole work: from objects alone after the first iteration.
  loop.tree.based_on = run_command("git rev-parse main", h.dir.str()).output.substr(0, 40);
  ASSERT_TRUE(update_loop(*h.store, loop).ok());

  const std::uint64_t before = git::work_tree_reads();
  Loop done = h.run(loop.id);
  const std::uint64_t reads = git::work_tree_reads() - before;
  ASSERT_EQ(done.status, LoopStatus::complete) << done.status_reason;
  ASSERT_EQ(done.iteration, 3);
  // The first iteration reads the worktree for its prompt, the protected paths and the
  // checkpoint (the validation command ran); the next ones only for the checkpoint, whose
  // staging replays the validation's sweep: their protected paths come from git and the paths
  // the tools wrote (issue 47 item 3; 3 + 2 + 2 before).
  EXPECT_EQ(reads, 5u);

  // And the prompts still show the whole work since the loop started.
  std::vector<std::string> prompts = prompts_of(h, loop.id);
  ASSERT_EQ(prompts.size(), 3u);
  EXPECT_NE(prompts[0].find("(no changes yet)"), std::string::npos) << prompts[0];
  EXPECT_NE(prompts[2].find("A work/1.txt\nA work/2.txt"), std::string::npos) << prompts[2];
  EXPECT_NE(prompts[2].find("Changed by iteration 2:\nA work/2.txt"), std::string::npos)
      << prompts[2];
  // Its last checkpoint followed the validation command: its clean state would serve a fourth
  // iteration, which the loop that completed never runs (issue 47 item 6).
  EXPECT_EQ(clean_checkpoints(), 0u) << "a clean state outlived its loop's run";
}

// Issue 47 item 3: the validation command's sweep (in its bubblewrap sandbox) is the
// checkpoint's too: one sweep of the worktree per iteration, not two, and every checkpoint still
// commits what the iteration wrote.
TEST(WorkTreeReadsTest, AnIterationSweepsItsWorktreeOnce) {
  EngineKit h(kOverLoopback, kOneFileEach, kProject);
  ASSERT_TRUE(h.config->sandbox.confined());
  h.config->loops[LoopType::code].validation = "test \"$LOOPR_ITERATION\" -ge 3";
  Loop loop = h.add_loop("code-001-001-001", LoopType::code, "Write three files", 5);

  const std::uint64_t before = worktree_sweeps();
  Loop done = h.run(loop.id);
  ASSERT_EQ(done.status, LoopStatus::complete) << done.status_reason;
  ASSERT_EQ(done.iteration, 3);
  // The first state read sweeps (nothing is checkpointed yet), then each iteration's validation
  // command: 1 + 3 (1 + 3 × 2 when each checkpoint swept again).
  EXPECT_EQ(worktree_sweeps() - before, 4u) << "the checkpoint swept the worktree again";
  EXPECT_EQ(handed_sweeps(), 0u) << "a listing outlived its iteration";
  EXPECT_EQ(clean_checkpoints(), 0u) << "a clean state outlived its loop's run";
  const std::string log = run_command("git log --format=%s --name-only", done.worktree).output;
  for (const char* file : {"work/1.txt", "work/2.txt", "work/3.txt"})
    EXPECT_NE(log.find(file), std::string::npos) << file << " not committed:\n" << log;
  EXPECT_EQ(run_command("git status --porcelain", done.worktree).output, "");
}

TEST(WorkTreeReadsTest, WhatAStopScriptLeavesAfterTheCheckpointIsInTheNextPromptAndCommit) {
  // A command that runs after the checkpoint (a stop script that does not stop the loop) writes
  // a file and deletes one the model wrote: the next state read walks the worktree again.
  EngineKit h(kOverLoopback, kOneFileEach, kProject);
  h.config->loops[LoopType::code].validation = "test \"$LOOPR_ITERATION\" -ge 2";
  h.config->limits.stop_scripts = {"echo left > left-by-script.txt; rm -f work/1.txt; exit 1"};
  Loop loop = h.add_loop("code-001-001-001", LoopType::code, "Write two files", 5);

  Loop done = h.run(loop.id);
  ASSERT_EQ(done.status, LoopStatus::complete) << done.status_reason;
  ASSERT_EQ(done.iteration, 2);
  std::vector<std::string> prompts = prompts_of(h, loop.id);
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_NE(prompts[1].find("## Git status\nA left-by-script.txt\nD work/1.txt\n"),
            std::string::npos)
      << prompts[1];
  // Iteration 2's checkpoint holds both the script's file and its deletion.
  auto tree = run_command("git ls-tree -r --name-only HEAD", done.worktree);
  EXPECT_NE(tree.output.find("left-by-script.txt"), std::string::npos) << tree.output;
  EXPECT_EQ(tree.output.find("work/1.txt"), std::string::npos) << tree.output;
  EXPECT_NE(tree.output.find("work/2.txt"), std::string::npos) << tree.output;
}

TEST(WorkTreeReadsTest, APlanLoopCommitsWhatItsToolsWroteWithoutWalkingTheWorktree) {
  // A plan loop runs no command: after its first checkpoint, the next one stages the paths its
  // write_file calls wrote, and the state read walks nothing either.
  EngineKit h(kOverLoopback, kPlanScript, {{"README", "greet\n"}});
  Loop loop = h.add_loop("001", LoopType::plan, "Add a --shout flag to greet");

  const std::uint64_t before = git::work_tree_reads();
  Loop done = h.run(loop.id);
  const std::uint64_t reads = git::work_tree_reads() - before;
  ASSERT_EQ(done.status, LoopStatus::awaiting_approval) << done.status_reason;
  ASSERT_EQ(done.iteration, 2);
  EXPECT_EQ(reads, 2u) << "iteration 1: its state and its checkpoint; iteration 2: none";
  auto show = run_command("git show HEAD:" + loop.output_artifacts.front(), done.worktree);
  EXPECT_NE(show.output.find("spec-cli-flag"), std::string::npos) << show.output;
  EXPECT_EQ(run_command("git status --porcelain", done.worktree).output, "");
  auto fsck = run_command("git fsck --strict --no-dangling --no-progress", h.dir.str());
  EXPECT_EQ(fsck.exit_code, 0) << fsck.output;
}

TEST(WorkTreeReadsTest, ACommandBesideTheToolsMakesTheCheckpointWalkTheWorktree) {
  // Iteration 2 changes the test harness (the check does not run) and runs a command that
  // writes a file and deletes one the model wrote before: the tools' list is not all that
  // changed, so the checkpoint stages the whole worktree.
  const std::string script = two_step_script(
      R"([{name: write_file, input: {path: "work/1.txt", content: "one\n"}}])",
      R"([{name: write_file, input: {path: check.sh, content: "exit 0\n"}},
          {name: run_command, input: {command: "echo hidden > by-command.txt && rm work/1.txt"}}])");
  EngineKit h(kOverLoopback, script, {{"check.sh", kHarness}});
  auto [done, recs, fast_reads] = run_two(h);
  // The command may have written anything: the protected paths are read by a walk.
  EXPECT_EQ(fast_reads, 0u);
  ASSERT_EQ(recs.size(), 2u);
  ASSERT_FALSE(recs[1].details.protected_files.empty()) << loopr::to_json(recs[1].details).dump();
  auto tree = run_command("git ls-tree -r --name-only HEAD", done.worktree);
  EXPECT_NE(tree.output.find("by-command.txt"), std::string::npos) << tree.output;
  EXPECT_EQ(tree.output.find("work/1.txt"), std::string::npos) << tree.output;
  EXPECT_EQ(run_command("git status --porcelain", done.worktree).output, "");
}

// Issue 47 item 3: after a clean checkpoint the protection check reads no worktree walk, and a
// protected file the tools wrote since is still caught on that path.
// proves S3.8, S1.25
TEST(WorkTreeReadsTest, AProtectedFileTheToolsWroteAfterACleanCheckpointIsCaughtWithoutAWalk) {
  const std::string script = two_step_script(
      R"([{name: write_file, input: {path: "work/1.txt", content: "one\n"}}])",
      R"([{name: write_file, input: {path: check.sh, content: "exit 0\n"}}])");
  EngineKit h(kOverLoopback, script, {{"check.sh", kHarness}});
  auto [done, recs, fast_reads] = run_two(h);
  EXPECT_EQ(fast_reads, 1u) << "iteration 2 walked the worktree";
  ASSERT_EQ(recs.size(), 2u);
  ASSERT_FALSE(recs[1].details.protected_files.empty()) << loopr::to_json(recs[1].details).dump();
  EXPECT_NE(loopr::to_json(recs[1].details).dump().find("check.sh"), std::string::npos)
      << loopr::to_json(recs[1].details).dump();
  EXPECT_EQ(clean_checkpoints(), 0u) << "a clean state outlived its iteration";
}

// A hostile model makes a hard link to the protected harness with a command, then writes the
// link with write_file after the clean checkpoint, hoping the check (which reads only the paths
// the tools wrote) misses a harness rewritten through another name. The file tools write a
// temporary and rename it over the link, so the harness's own inode is never written: the check
// takes the fast path and the tests still run the harness as it was.
// proves S1.25
TEST(WorkTreeReadsTest, AHardLinkToTheHarnessWrittenByTheToolsLeavesTheHarnessAsItWas) {
  const std::string script = two_step_script(
      R"([{name: run_command, input: {command: "ln check.sh alias.sh"}}])",
      R"([{name: write_file, input: {path: alias.sh, content: "exit 0\n"}}])");
  EngineKit h(kOverLoopback, script, {{"check.sh", kHarness}});
  auto [done, recs, fast_reads] = run_two(h);
  EXPECT_EQ(fast_reads, 1u) << "iteration 2 walked the worktree";
  EXPECT_NE(done.status, LoopStatus::complete) << "the harness was rewritten through its link";
  EXPECT_EQ(read_file(std::filesystem::path(done.worktree) / "check.sh"), kHarness);
  EXPECT_EQ(read_file(std::filesystem::path(done.worktree) / "alias.sh"), "exit 0\n");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_NE(recs[1].status, IterationOutcome::passed) << loopr::to_json(recs[1].details).dump();
}

// The validation command leaves an ignored harness file (`conftest.py` in `.gitignore`: never
// committed, so the check on the checkpoint cannot see it). The next iteration's check, read
// from the clean checkpoint, still sees it before the tests run again.
// proves S3.8, S1.25
TEST(WorkTreeReadsTest, AnIgnoredHarnessFileTheTestsLeftIsCaughtAfterACleanCheckpoint) {
  EngineKit h(kOverLoopback, kOneFileEach,
              {{".gitignore", "conftest.py\n"},
               {"check.sh",
                "[ \"$LOOPR_ITERATION\" = 1 ] && echo 'import os' > conftest.py\n"
                "test \"$LOOPR_ITERATION\" -ge 3\n"}});
  auto [done, recs, fast_reads] = run_two(h);
  ASSERT_TRUE(std::filesystem::exists(std::filesystem::path(done.worktree) / "conftest.py"));
  EXPECT_EQ(fast_reads, 1u) << "iteration 2 walked the worktree";
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_TRUE(recs[0].details.protected_files.empty()) << loopr::to_json(recs[0].details).dump();
  ASSERT_FALSE(recs[1].details.protected_files.empty()) << loopr::to_json(recs[1].details).dump();
  EXPECT_NE(loopr::to_json(recs[1].details).dump().find("conftest.py"), std::string::npos)
      << loopr::to_json(recs[1].details).dump();
}
