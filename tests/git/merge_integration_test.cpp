// Merging loop → integration and integration → base: fast-forward, merge commit, up to date,
// conflicts that change nothing, a base checked out in the user's work tree, concurrent merges.
#include <thread>

#include "git/plan_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;
using Kind = loopr::git::MergeOutcome::Kind;

namespace {

class MergeTest : public PlanFixture {
 protected:
  // A refused merge: the target did not move and the repository is sound.
  void expect_target_untouched(const std::string& target, const std::string& tip) {
    EXPECT_EQ(sha(target), tip);
    EXPECT_TRUE(fsck_clean(t_.root()));
  }
};

}  // namespace

TEST_F(MergeTest, FastForwardWhenTheTargetHasNothingOfItsOwn) {
  git::Worktree a = loop("001-001");
  std::string tip = commit(a, {{"a.txt", "a\n"}}, "a");
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(branch_of("001-001"), integration()));
  EXPECT_EQ(m.kind, Kind::fast_forward);
  EXPECT_EQ(m.sha, tip);
  EXPECT_EQ(sha(integration()), tip);
  ASSERT_OK_AND_ASSIGN(m, repo_.merge(branch_of("001-001"), integration()));
  EXPECT_EQ(m.kind, Kind::up_to_date);
  EXPECT_EQ(m.sha, tip);
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(MergeTest, MergeCommitWhenBothSidesMoved) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"a.txt", "a\n"}}, "a");
  land("001-001");
  std::string before = sha(integration());
  std::string b_tip = commit(b, {{"b.txt", "b\n"}}, "b");

  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(branch_of("001-002"), integration()));
  EXPECT_EQ(m.kind, Kind::merged);
  EXPECT_EQ(m.sha, sha(integration()));
  EXPECT_EQ(git_line(t_.root(), "rev-list --parents -n 1 " + integration()),
            m.sha + " " + before + " " + b_tip);
  EXPECT_EQ(git_line(t_.root(), "log -1 --format=%s " + integration()),
            "Merge branch '" + branch_of("001-002") + "' into " + integration());
  EXPECT_EQ(run_git(t_.root(), "show " + integration() + ":a.txt"), "a\n");
  EXPECT_EQ(run_git(t_.root(), "show " + integration() + ":b.txt"), "b\n");
  // Merging the integration branch back is a no-op for b now.
  ASSERT_OK_AND_ASSIGN(m, repo_.merge(branch_of("001-002"), integration(), "custom"));
  EXPECT_EQ(m.kind, Kind::up_to_date);
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(MergeTest, CustomMessageIsUsed) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"a.txt", "a\n"}}, "a");
  land("001-001");
  commit(b, {{"b.txt", "b\n"}}, "b");
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m,
                       repo_.merge(branch_of("001-002"), integration(), "loop 001-002 done\n"));
  EXPECT_EQ(m.kind, Kind::merged);
  EXPECT_EQ(git_line(t_.root(), "log -1 --format=%B " + integration()), "loop 001-002 done");
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(MergeTest, ConflictOnTheSameLinesLeavesTheTargetUntouched) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"shared.txt", "line 1\nby a\nline 3\n"}, {"a.txt", "a\n"}}, "a");
  land("001-001");
  std::string before = sha(integration());
  commit(b, {{"shared.txt", "line 1\nby b\nline 3\n"}, {"b.txt", "b\n"}}, "b");
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(branch_of("001-002"), integration()));
  EXPECT_EQ(m.kind, Kind::conflict);
  EXPECT_EQ(m.conflicts, std::vector<std::string>{"shared.txt"});
  EXPECT_EQ(m.sha, before);
  expect_target_untouched(integration(), before);
}

TEST_F(MergeTest, DeleteVersusEditConflictsBothWays) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  remove(a, "README.md", "a deletes");
  land("001-001");
  std::string before = sha(integration());
  commit(b, {{"README.md", "# b edits\n"}}, "b edits");
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(branch_of("001-002"), integration()));
  EXPECT_EQ(m.kind, Kind::conflict);
  EXPECT_EQ(m.conflicts, std::vector<std::string>{"README.md"});
  expect_target_untouched(integration(), before);

  // The other direction: the target edited what the source deleted.
  ASSERT_OK_AND_ASSIGN(m, repo_.merge(integration(), branch_of("001-002")));
  EXPECT_EQ(m.kind, Kind::conflict);
  EXPECT_EQ(m.conflicts, std::vector<std::string>{"README.md"});
  // That target is checked out in b's worktree: its files and status did not change either.
  EXPECT_EQ(read_file(b.path() / "README.md"), "# b edits\n");
  EXPECT_EQ(run_git(b.path(), "status --porcelain"), "");
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(MergeTest, BinaryFilesConflictOrMergeByteExact) {
  git::Worktree seed = loop("001-000");
  commit(seed, {{"logo.png", binary_blob(0)}}, "binary");
  land("001-000");
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  git::Worktree c = loop("001-003");
  commit(a, {{"logo.png", binary_blob(1)}}, "a");
  land("001-001");
  std::string before = sha(integration());
  commit(b, {{"logo.png", binary_blob(2)}}, "b");
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(branch_of("001-002"), integration()));
  EXPECT_EQ(m.kind, Kind::conflict);
  EXPECT_EQ(m.conflicts, std::vector<std::string>{"logo.png"});
  expect_target_untouched(integration(), before);

  commit(c, {{"icon.png", binary_blob(3)}}, "c adds another binary");
  ASSERT_OK_AND_ASSIGN(m, repo_.merge(branch_of("001-003"), integration()));
  EXPECT_EQ(m.kind, Kind::merged);
  EXPECT_EQ(run_git(t_.root(), "show " + integration() + ":logo.png"), binary_blob(1));
  EXPECT_EQ(run_git(t_.root(), "show " + integration() + ":icon.png"), binary_blob(3));
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(MergeTest, IntoTheBaseCheckedOutInTheMainWorkTreeUpdatesItsFiles) {
  git::Worktree a = loop("001-001");
  commit(a, {{"feature.txt", "feature\n"}, {"shared.txt", "line 1\nline 2 improved\nline 3\n"}},
         "a");
  remove(a, "README.md", "a removes the readme");
  land("001-001");
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(integration(), "trunk"));
  EXPECT_EQ(m.kind, Kind::fast_forward);
  EXPECT_EQ(git_line(t_.root(), "rev-parse HEAD"), m.sha);
  EXPECT_EQ(t_.read("feature.txt"), "feature\n");
  EXPECT_EQ(t_.read("shared.txt"), "line 1\nline 2 improved\nline 3\n");
  EXPECT_FALSE(std::filesystem::exists(t_.root() / "README.md"));
  EXPECT_EQ(run_git(t_.root(), "status --porcelain"), "");
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(MergeTest, IntoABaseThatMovedMakesAMergeCommitAndUpdatesTheWorkTree) {
  git::Worktree a = loop("001-001");
  commit(a, {{"feature.txt", "feature\n"}}, "a");
  land("001-001");
  t_.write("user.txt", "the user committed meanwhile\n");
  std::string user_tip = t_.commit_all("user work");
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(integration(), "trunk"));
  EXPECT_EQ(m.kind, Kind::merged);
  EXPECT_EQ(git_line(t_.root(), "rev-list --parents -n 1 HEAD"),
            m.sha + " " + user_tip + " " + sha(integration()));
  EXPECT_EQ(t_.read("feature.txt"), "feature\n");
  EXPECT_EQ(t_.read("user.txt"), "the user committed meanwhile\n");
  EXPECT_EQ(run_git(t_.root(), "status --porcelain"), "");
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(MergeTest, ConflictIntoTheCheckedOutBaseLeavesTheUsersWorkTreeAlone) {
  git::Worktree a = loop("001-001");
  commit(a, {{"shared.txt", "line 1\nby loopr\nline 3\n"}}, "a");
  land("001-001");
  t_.write("shared.txt", "line 1\nby the user\nline 3\n");
  std::string user_tip = t_.commit_all("user edits the same line");
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(integration(), "trunk"));
  EXPECT_EQ(m.kind, Kind::conflict);
  EXPECT_EQ(m.conflicts, std::vector<std::string>{"shared.txt"});
  EXPECT_EQ(m.sha, user_tip);
  EXPECT_EQ(t_.read("shared.txt"), "line 1\nby the user\nline 3\n");
  EXPECT_EQ(run_git(t_.root(), "status --porcelain"), "");
  expect_target_untouched("trunk", user_tip);
}

TEST_F(MergeTest, RefusesToMoveABaseWhileTheUserIsMidMerge) {
  git::Worktree a = loop("001-001");
  commit(a, {{"feature.txt", "feature\n"}}, "a");
  land("001-001");
  // The user is resolving a conflicting merge of their own in the main work tree.
  run_git(t_.root(), "checkout -q -b side");
  t_.write("shared.txt", "side\n");
  t_.commit_all("side");
  run_git(t_.root(), "checkout -q trunk");
  t_.write("shared.txt", "trunk\n");
  std::string base_tip = t_.commit_all("trunk");
  EXPECT_NE(run_command("git merge side", t_.root().string()).exit_code, 0);
  std::string status_before = run_git(t_.root(), "status --porcelain");

  auto m = repo_.merge(integration(), "trunk");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, ErrorCode::conflict);
  EXPECT_NE(m.error().message.find("in progress"), std::string::npos) << m.error().message;
  EXPECT_EQ(sha("trunk"), base_tip);
  EXPECT_EQ(run_git(t_.root(), "status --porcelain"), status_before);
  EXPECT_TRUE(std::filesystem::exists(t_.root() / ".git/MERGE_HEAD"));
  run_git(t_.root(), "merge --abort");
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(MergeTest, IntoTheBaseKeepsTheUsersUnrelatedUncommittedEdits) {
  git::Worktree a = loop("001-001");
  commit(a, {{"shared.txt", "line 1\nby loopr\nline 3\n"}}, "a");
  land("001-001");
  t_.write("README.md", "# the user is editing this\n");
  t_.write("notes.txt", "untracked notes\n");
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(integration(), "trunk"));
  EXPECT_EQ(m.kind, Kind::fast_forward);
  EXPECT_EQ(t_.read("shared.txt"), "line 1\nby loopr\nline 3\n");
  EXPECT_EQ(t_.read("README.md"), "# the user is editing this\n");
  EXPECT_EQ(run_git(t_.root(), "status --porcelain"), " M README.md\n?? notes.txt\n");
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(MergeTest, IntoTheBaseRefusesToOverwriteTheUsersEdits) {
  git::Worktree a = loop("001-001");
  commit(a, {{"shared.txt", "line 1\nby loopr\nline 3\n"}, {"new.txt", "from loopr\n"}}, "a");
  land("001-001");
  std::string base_tip = sha("trunk");

  // An unstaged edit, a staged edit, and an untracked file where the merge adds one.
  for (int scenario = 0; scenario < 3; ++scenario) {
    std::string path = scenario == 2 ? "new.txt" : "shared.txt";
    t_.write(path, "the user's own words\n");
    if (scenario == 1) run_git(t_.root(), "add shared.txt");
    std::string status_before = run_git(t_.root(), "status --porcelain");

    ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(integration(), "trunk"));
    EXPECT_EQ(m.kind, Kind::local_changes) << "scenario " << scenario;
    EXPECT_EQ(m.conflicts, std::vector<std::string>{path}) << "scenario " << scenario;
    EXPECT_EQ(m.sha, base_tip);
    EXPECT_EQ(sha("trunk"), base_tip);
    EXPECT_EQ(t_.read(path), "the user's own words\n");
    EXPECT_EQ(run_git(t_.root(), "status --porcelain"), status_before);

    // Cleaned up by the user, the same merge goes through.
    run_git(t_.root(), "reset -q --hard");
    if (scenario == 2) std::filesystem::remove(t_.root() / "new.txt");
  }
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(integration(), "trunk"));
  EXPECT_EQ(m.kind, Kind::fast_forward);
  EXPECT_EQ(t_.read("new.txt"), "from loopr\n");
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(MergeTest, LoopsFinishingAtTheSameTimeAllLand) {
  constexpr int kLoops = 6;
  std::vector<git::Worktree> loops;
  for (int i = 0; i < kLoops; ++i) {
    std::string id = "001-00" + std::to_string(i + 1);
    loops.push_back(loop(id));
    commit(loops.back(), {{"loop-" + std::to_string(i) + ".txt", id + "\n"}}, id);
  }
  std::vector<Result<git::MergeOutcome>> results(kLoops, Error{});
  std::vector<std::thread> threads;
  for (int i = 0; i < kLoops; ++i) {
    threads.emplace_back([&, i] {
      results[i] = repo_.merge(branch_of("001-00" + std::to_string(i + 1)), integration());
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < kLoops; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].error().message;
    EXPECT_TRUE(results[i]->kind == Kind::fast_forward || results[i]->kind == Kind::merged)
        << git::to_string(results[i]->kind);
  }
  for (int i = 0; i < kLoops; ++i) {
    EXPECT_EQ(run_git(t_.root(), "show " + integration() + ":loop-" + std::to_string(i) + ".txt"),
              "001-00" + std::to_string(i + 1) + "\n");
    EXPECT_EQ(run_command("git merge-base --is-ancestor " +
                              branch_of("001-00" + std::to_string(i + 1)) + " " + integration(),
                          t_.root().string())
                  .exit_code,
              0);
  }
  EXPECT_TRUE(fsck_clean(t_.root()));
}

// Criss-cross history has two merge bases; the merge goes through git_merge_commits' recursive
// merge there, and must give the tree git itself gives (`git merge-tree --write-tree`).
TEST_F(MergeTest, CrissCrossHistoryMergesToTheTreeGitMakes) {
  git::Worktree a = loop("001-001");
  commit(a, {{"shared.txt", "1\n2\n3\n4\n5\n6\n7\n8\n"}}, "shared");
  land("001-001");
  run_git(t_.root(), "branch x " + integration());
  run_git(t_.root(), "branch y " + integration());
  git::Worktree x = loop("001-002");
  run_git(x.path(), "checkout -q x");
  write_file(x.path() / "shared.txt", "one\n2\n3\n4\n5\n6\n7\n8\n");
  run_git(x.path(), "commit -qam x1");
  run_git(x.path(), "checkout -q y");
  write_file(x.path() / "shared.txt", "1\n2\n3\n4\n5\n6\n7\neight\n");
  run_git(x.path(), "commit -qam y1");
  std::string x1 = sha("x"), y1 = sha("y");
  // x merges y1, y merges x1: two merge bases from here on.
  run_git(x.path(), "checkout -q x");
  run_git(x.path(), "merge -q --no-edit " + y1);
  run_git(x.path(), "checkout -q y");
  run_git(x.path(), "merge -q --no-edit " + x1);
  run_git(x.path(), "checkout -q x");
  write_file(x.path() / "x.txt", "x\n");
  run_git(x.path(), "add -A");
  run_git(x.path(), "commit -qm x2");
  run_git(x.path(), "checkout -q y");
  write_file(x.path() / "shared.txt", "one\n2\n3\nfour\n5\n6\n7\neight\n");
  run_git(x.path(), "commit -qam y2");
  run_git(x.path(), "checkout -q --detach");
  ASSERT_EQ(lines_of(run_git(t_.root(), "merge-base --all x y")).size(), 2u);

  std::string git_tree = lines_of(run_git(t_.root(), "merge-tree --write-tree x y")).at(0);
  std::string x_tip = sha("x");
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge("y", "x"));
  EXPECT_EQ(m.kind, Kind::merged);
  EXPECT_EQ(git_line(t_.root(), "rev-parse x^{tree}"), git_tree);
  EXPECT_EQ(git_line(t_.root(), "rev-parse x^1"), x_tip);
  EXPECT_EQ(run_git(t_.root(), "show x:shared.txt"), "one\n2\n3\nfour\n5\n6\n7\neight\n");
  EXPECT_EQ(run_git(t_.root(), "show x:x.txt"), "x\n");
  EXPECT_TRUE(fsck_clean(t_.root()));
}

// Merges read history through a repository handle kept open between merges. Whatever git does
// to the object database meanwhile (new commits, `git gc` packing and pruning every loose object,
// the handle's own merge commits included) must be seen by the next merge.
TEST_F(MergeTest, MergesSeeHistoryMadeAndRepackedByGitInBetween) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"a.txt", "a\n"}}, "a");
  commit(b, {{"b.txt", "b\n"}}, "b");
  land("001-001");
  land("001-002");  // a merge commit written through the kept handle
  std::string after_b = sha(integration());
  // The user works with git meanwhile: a branch of commits from the integration tip, then a gc
  // that packs everything into a new pack and deletes the loose objects.
  run_git(t_.root(), "branch side " + integration());
  git::Worktree c = loop("001-003");
  run_git(c.path(), "checkout -q side");
  for (int i = 0; i < 3; ++i) {
    write_file(c.path() / ("side-" + std::to_string(i) + ".txt"), std::to_string(i) + "\n");
    run_git(c.path(), "add -A");
    run_git(c.path(), "commit -qm side" + std::to_string(i));
  }
  run_git(c.path(), "checkout -q --detach");
  git::Worktree d = loop("001-004");
  commit(d, {{"d.txt", "d\n"}}, "d");
  land("001-004");  // the integration branch moves on, so side needs a real merge
  run_git(t_.root(), "gc -q --prune=now");
  ASSERT_EQ(run_git(t_.root(), "count-objects").substr(0, 2), "0 ");  // no loose object left

  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge("side", integration()));
  EXPECT_EQ(m.kind, Kind::merged);
  EXPECT_EQ(git_line(t_.root(), "merge-base " + integration() + " side"), sha("side"));
  EXPECT_EQ(run_command("git merge-base --is-ancestor " + after_b + " " + integration(),
                        t_.root().string())
                .exit_code,
            0);
  for (const char* f : {"a.txt", "b.txt", "d.txt", "side-0.txt", "side-2.txt"}) {
    EXPECT_EQ(
        run_command(std::string("git cat-file -e ") + integration() + ":" + f, t_.root().string())
            .exit_code,
        0)
        << f;
  }
  // And a fast-forward and an up-to-date answer after the gc, from the same kept handle.
  ASSERT_OK_AND_ASSIGN(m, repo_.merge("side", integration()));
  EXPECT_EQ(m.kind, Kind::up_to_date);
  EXPECT_TRUE(fsck_clean(t_.root()));
}
