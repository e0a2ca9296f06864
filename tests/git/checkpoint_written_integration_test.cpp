// A checkpoint from the paths loopr's file tools wrote (Worktree::checkpoint_written, issue 32):
// the same commit `git add -A` would make of them, without walking the work tree; a full
// checkpoint whenever HEAD is not the commit after which only those tools wrote.
#include <loopr/git/branches.hpp>
#include <loopr/git/work_tree_state.hpp>
#include <loopr/git/worktree.hpp>

#include "git/git_test_repo.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::CommitOutcome;
using loopr::git::Repository;
using loopr::git::Worktree;

namespace {

Worktree loop_worktree(const Repository& repo) {
  EXPECT_TRUE(repo.create_branch(git::integration_branch("001"), "trunk").ok());
  EXPECT_TRUE(
      repo.create_branch(git::loop_branch("001", "code-1"), git::integration_branch("001")).ok());
  auto wt = repo.add_worktree("code-1", git::loop_branch("001", "code-1"));
  EXPECT_TRUE(wt.ok()) << (wt.ok() ? "" : wt.error().message);
  return std::move(wt).value();
}

}  // namespace

TEST(CheckpointWrittenTest, StagesTheWrittenPathsAsGitAddAllWouldWithoutAWalk) {
  TestRepo t;
  Worktree wt = loop_worktree(t.open());
  ASSERT_OK_AND_ASSIGN(CommitOutcome first, Worktree::checkpoint_at(wt.path(), "iteration 1"));
  // What the tools wrote: an edit, a file in a new folder, an ignored file, a private one, and
  // a tracked file that is gone (listed, deleted).
  write_file(wt.path() / "shared.txt", "changed\n");
  write_file(wt.path() / "src/new/a.c", "int a;\n");
  write_file(wt.path() / "build.log", "ignored\n");
  write_file(wt.path() / ".loopr/logs/x.txt", "private\n");
  std::filesystem::remove(wt.path() / "README.md");
  const std::vector<std::string> written = {"README.md", "build.log", ".loopr/logs/x.txt",
                                            "shared.txt", "src/new/a.c"};

  const std::uint64_t before = git::work_tree_reads();
  ASSERT_OK_AND_ASSIGN(CommitOutcome made,
                       Worktree::checkpoint_written(wt.path(), "iteration 2", first.sha, written));
  EXPECT_EQ(git::work_tree_reads(), before) << "the work tree was walked";
  EXPECT_EQ(made.kind, CommitOutcome::Kind::committed);
  EXPECT_EQ(git_line(wt.path(), "rev-parse HEAD"), made.sha);
  // What the CLI sees: all of it committed, the ignored and private files left untracked.
  EXPECT_EQ(run_git(wt.path(), "status --porcelain"), "");
  EXPECT_EQ(run_git(wt.path(), "diff --name-status HEAD~1 HEAD"),
            "D\tREADME.md\nM\tshared.txt\nA\tsrc/new/a.c\n");
  EXPECT_EQ(git_line(wt.path(), "log -1 --format=%s"), "iteration 2");
  EXPECT_TRUE(fsck_clean(t.root()));
  // Nothing more written: nothing to commit.
  ASSERT_OK_AND_ASSIGN(CommitOutcome again,
                       Worktree::checkpoint_written(wt.path(), "iteration 3", made.sha, {}));
  EXPECT_EQ(again.kind, CommitOutcome::Kind::nothing_to_commit);
}

TEST(CheckpointWrittenTest, AMovedHeadMakesItAFullCheckpoint) {
  TestRepo t;
  Worktree wt = loop_worktree(t.open());
  ASSERT_OK_AND_ASSIGN(CommitOutcome first, Worktree::checkpoint_at(wt.path(), "iteration 1"));
  write_file(wt.path() / "b.txt", "b\n");
  t.commit_all("by hand", wt.path());
  // Not in the list: found by the walk all the same.
  write_file(wt.path() / "unlisted.txt", "c\n");
  write_file(wt.path() / "listed.txt", "d\n");

  const std::uint64_t before = git::work_tree_reads();
  ASSERT_OK_AND_ASSIGN(CommitOutcome made, Worktree::checkpoint_written(wt.path(), "iteration 2",
                                                                        first.sha, {"listed.txt"}));
  EXPECT_EQ(git::work_tree_reads(), before + 1);
  EXPECT_EQ(made.kind, CommitOutcome::Kind::committed);
  EXPECT_EQ(run_git(wt.path(), "status --porcelain"), "");
  EXPECT_TRUE(fsck_clean(t.root()));
}
