// Rebasing a loop branch onto its integration branch: clean, conflicting (same lines,
// delete vs edit, binary), and uncommitted edits in the way. A conflict must change nothing.
#include "git/plan_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;
using Kind = loopr::git::RebaseOutcome::Kind;

namespace {

class RebaseTest : public PlanFixture {
 protected:
  // After a refused rebase: same tip, same files, a clean `git status`, no rebase in progress.
  void expect_untouched(const git::Worktree& wt, const std::string& loop_id, const std::string& tip,
                        const std::string& file, const std::optional<std::string>& content) {
    EXPECT_EQ(sha(branch_of(loop_id)), tip);
    EXPECT_EQ(git_line(wt.path(), "rev-parse HEAD"), tip);
    if (content) {
      EXPECT_EQ(read_file(wt.path() / file), *content);
    } else {
      EXPECT_FALSE(std::filesystem::exists(wt.path() / file));
    }
    EXPECT_FALSE(std::filesystem::exists(t_.root() / ".git/worktrees" / loop_id / "rebase-merge"));
    EXPECT_FALSE(std::filesystem::exists(t_.root() / ".git/rebase-merge"));
    EXPECT_TRUE(fsck_clean(t_.root()));
  }
};

}  // namespace

TEST_F(RebaseTest, CleanRebaseReplaysTheLoopsCommitsOnTheNewTip) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"a.txt", "from loop a\n"}}, "loop 001-001 iteration 1");
  land("001-001");
  commit(b, {{"b.txt", "from loop b\n"}}, "loop 001-002 iteration 1");
  std::string old_tip = commit(b, {{"b2.txt", "more b\n"}}, "loop 001-002 iteration 2");

  ASSERT_OK_AND_ASSIGN(git::RebaseOutcome r, b.rebase_onto(integration()));
  EXPECT_EQ(r.kind, Kind::rebased);
  EXPECT_TRUE(r.conflicts.empty());
  EXPECT_NE(r.sha, old_tip);
  EXPECT_EQ(r.sha, sha(branch_of("001-002")));
  EXPECT_EQ(r.sha, git_line(b.path(), "rev-parse HEAD"));
  EXPECT_EQ(
      run_command("git merge-base --is-ancestor " + integration() + " HEAD", b.path().string())
          .exit_code,
      0);
  EXPECT_EQ(git_line(b.path(), "rev-list --count " + integration() + "..HEAD"), "2");
  EXPECT_EQ(run_git(b.path(), "log --format=%s -n 2"),
            "loop 001-002 iteration 2\nloop 001-002 iteration 1\n");
  // The worktree follows its branch: loop a's file arrived, b's work is there, nothing dirty.
  EXPECT_EQ(read_file(b.path() / "a.txt"), "from loop a\n");
  EXPECT_EQ(read_file(b.path() / "b2.txt"), "more b\n");
  EXPECT_EQ(run_git(b.path(), "status --porcelain"), "");
  // Now the loop lands as a fast-forward.
  ASSERT_OK_AND_ASSIGN(git::MergeOutcome m, repo_.merge(branch_of("001-002"), integration()));
  EXPECT_EQ(m.kind, git::MergeOutcome::Kind::fast_forward);
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(RebaseTest, NoOwnCommitsFastForwardsThenIsUpToDate) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"a.txt", "a\n"}}, "a");
  land("001-001");
  ASSERT_OK_AND_ASSIGN(git::RebaseOutcome r, b.rebase_onto(integration()));
  EXPECT_EQ(r.kind, Kind::fast_forward);
  EXPECT_EQ(r.sha, sha(integration()));
  EXPECT_EQ(read_file(b.path() / "a.txt"), "a\n");
  EXPECT_EQ(run_git(b.path(), "status --porcelain"), "");
  ASSERT_OK_AND_ASSIGN(r, b.rebase_onto(integration()));
  EXPECT_EQ(r.kind, Kind::up_to_date);
  EXPECT_EQ(r.sha, sha(integration()));
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(RebaseTest, ConflictOnTheSameLinesChangesNothing) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"shared.txt", "line 1\nline 2 by a\nline 3\n"}}, "a edits line 2");
  land("001-001");
  // b's first commit would apply cleanly; its second conflicts. Neither may land.
  commit(b, {{"b.txt", "b\n"}}, "b adds a file");
  std::string tip = commit(b, {{"shared.txt", "line 1\nline 2 by b\nline 3\n"}}, "b edits line 2");

  ASSERT_OK_AND_ASSIGN(git::RebaseOutcome r, b.rebase_onto(integration()));
  EXPECT_EQ(r.kind, Kind::conflict);
  EXPECT_EQ(r.conflicts, std::vector<std::string>{"shared.txt"});
  EXPECT_EQ(r.stopped_at, tip);
  EXPECT_EQ(r.sha, tip);
  EXPECT_EQ(run_git(b.path(), "status --porcelain"), "");
  expect_untouched(b, "001-002", tip, "shared.txt", "line 1\nline 2 by b\nline 3\n");
  EXPECT_FALSE(std::filesystem::exists(b.path() / "a.txt"));
}

TEST_F(RebaseTest, DeletedUpstreamButEditedInTheLoopConflicts) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  remove(a, "README.md", "a deletes the readme");
  land("001-001");
  std::string tip = commit(b, {{"README.md", "# edited by b\n"}}, "b edits the readme");

  ASSERT_OK_AND_ASSIGN(git::RebaseOutcome r, b.rebase_onto(integration()));
  EXPECT_EQ(r.kind, Kind::conflict);
  EXPECT_EQ(r.conflicts, std::vector<std::string>{"README.md"});
  EXPECT_EQ(run_git(b.path(), "status --porcelain"), "");
  expect_untouched(b, "001-002", tip, "README.md", "# edited by b\n");
}

TEST_F(RebaseTest, EditedUpstreamButDeletedInTheLoopConflicts) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"README.md", "# edited by a\n"}}, "a edits the readme");
  land("001-001");
  std::string tip = remove(b, "README.md", "b deletes the readme");

  ASSERT_OK_AND_ASSIGN(git::RebaseOutcome r, b.rebase_onto(integration()));
  EXPECT_EQ(r.kind, Kind::conflict);
  EXPECT_EQ(r.conflicts, std::vector<std::string>{"README.md"});
  EXPECT_EQ(run_git(b.path(), "status --porcelain"), "");
  expect_untouched(b, "001-002", tip, "README.md", std::nullopt);
}

TEST_F(RebaseTest, BinaryFilesConflictWhenBothChangeThemAndRebaseWhenOneDoes) {
  git::Worktree seed = loop("001-000");
  commit(seed, {{"logo.png", binary_blob(0)}}, "add a binary");
  land("001-000");
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  git::Worktree c = loop("001-003");
  commit(a, {{"logo.png", binary_blob(1)}}, "a changes the binary");
  land("001-001");

  std::string b_tip = commit(b, {{"logo.png", binary_blob(2)}}, "b changes it too");
  ASSERT_OK_AND_ASSIGN(git::RebaseOutcome r, b.rebase_onto(integration()));
  EXPECT_EQ(r.kind, Kind::conflict);
  EXPECT_EQ(r.conflicts, std::vector<std::string>{"logo.png"});
  EXPECT_EQ(run_git(b.path(), "status --porcelain"), "");
  expect_untouched(b, "001-002", b_tip, "logo.png", binary_blob(2));

  commit(c, {{"other.txt", "c\n"}}, "c leaves the binary alone");
  ASSERT_OK_AND_ASSIGN(r, c.rebase_onto(integration()));
  EXPECT_EQ(r.kind, Kind::rebased);
  EXPECT_EQ(read_file(c.path() / "logo.png"), binary_blob(1));
  EXPECT_EQ(run_git(c.path(), "status --porcelain"), "");
  EXPECT_TRUE(fsck_clean(t_.root()));
}

TEST_F(RebaseTest, UncommittedEditsInTheWayStopItAndOthersAreCarried) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  git::Worktree c = loop("001-003");
  commit(a, {{"shared.txt", "line 1\nchanged by a\nline 3\n"}}, "a");
  land("001-001");

  std::string b_tip = sha(branch_of("001-002"));
  write_file(b.path() / "shared.txt", "unsaved edit by b\n");
  ASSERT_OK_AND_ASSIGN(git::RebaseOutcome r, b.rebase_onto(integration()));
  EXPECT_EQ(r.kind, Kind::local_changes);
  EXPECT_EQ(r.conflicts, std::vector<std::string>{"shared.txt"});
  EXPECT_EQ(run_git(b.path(), "status --porcelain"), " M shared.txt\n");
  expect_untouched(b, "001-002", b_tip, "shared.txt", "unsaved edit by b\n");

  write_file(c.path() / "README.md", "unsaved, unrelated\n");
  ASSERT_OK_AND_ASSIGN(r, c.rebase_onto(integration()));
  EXPECT_EQ(r.kind, Kind::fast_forward);
  EXPECT_EQ(read_file(c.path() / "shared.txt"), "line 1\nchanged by a\nline 3\n");
  EXPECT_EQ(read_file(c.path() / "README.md"), "unsaved, unrelated\n");
  EXPECT_EQ(run_git(c.path(), "status --porcelain"), " M README.md\n");
  EXPECT_TRUE(fsck_clean(t_.root()));
}
