// git::Cleanup on a real repository, checked with the git CLI: merged or not, archiving a branch
// (under the next free name), its reflog time, refusing what is not loopr's, pruning the record
// of a worktree whose folder is gone, and the disk a folder takes.
#include <gtest/gtest.h>

#include <loopr/core/loop.hpp>
#include <loopr/git/cleanup.hpp>

#include "git/git_test_repo.hpp"

using namespace loopr;
using namespace loopr::git;
using namespace loopr::testing;

TEST(CleanupTest, MergedIntoIsAncestryAndArchivingTakesTheNextFreeName) {
  TestRepo repo;
  run_git(repo.root(), "branch loopr/001 trunk");
  run_git(repo.root(), "checkout -q -b loopr/001-loops/code-1");
  repo.write("a.txt", "work\n");
  run_git(repo.root(), "add a.txt");
  run_git(repo.root(), "commit -qm work");
  run_git(repo.root(), "checkout -q trunk");
  Cleanup c(repo.root());
  EXPECT_EQ(*c.merged_into("loopr/001", "trunk"), true) << "the same commit";
  EXPECT_EQ(*c.merged_into("loopr/001-loops/code-1", "trunk"), false);
  EXPECT_EQ(*c.merged_into("trunk", "loopr/001-loops/code-1"), true) << "an ancestor";
  EXPECT_EQ(c.merged_into("loopr/none", "trunk").error().code, ErrorCode::not_found);

  run_git(repo.root(), "branch loopr/archive/code-1 trunk");  // an earlier attempt's
  const TimestampMs before = now_ms() / 1000 * 1000;
  auto archived = c.archive_branch("loopr/001-loops/code-1", "code-1");
  ASSERT_TRUE(archived.ok()) << archived.error().message;
  EXPECT_EQ(*archived, "loopr/archive/code-1-2");
  EXPECT_EQ(git_line(repo.root(), "log -1 --format=%s loopr/archive/code-1-2"), "work");
  EXPECT_FALSE(*Repository::open(repo.root())->has_branch("loopr/001-loops/code-1"));
  auto moved = c.moved_at("loopr/archive/code-1-2");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  ASSERT_TRUE(moved->has_value()) << "git keeps a reflog of branches in a non-bare repository";
  EXPECT_GE(**moved, before);
  EXPECT_LE(**moved, now_ms());

  auto branches = c.loopr_branches();
  ASSERT_TRUE(branches.ok());
  EXPECT_EQ(*branches, (std::vector<std::string>{"loopr/001", "loopr/archive/code-1",
                                                 "loopr/archive/code-1-2"}));
  EXPECT_TRUE(c.delete_branch("loopr/archive/code-1").ok());
  EXPECT_EQ(c.delete_branch("loopr/archive/code-1").error().code, ErrorCode::not_found);
  EXPECT_EQ(c.delete_branch("trunk").error().code, ErrorCode::invalid_argument)
      << "never a branch outside loopr/";
  EXPECT_EQ(c.archive_branch("trunk", "x").error().code, ErrorCode::invalid_argument);
  EXPECT_TRUE(fsck_clean(repo.root()));
}

TEST(CleanupTest, ABranchCheckedOutIsNeitherDeletedNorArchived) {
  TestRepo repo;
  run_git(repo.root(), "branch loopr/001-loops/code-1 trunk");
  run_git(repo.root(), "worktree add -q .loopr/worktrees/code-1 loopr/001-loops/code-1");
  Cleanup c(repo.root());
  EXPECT_EQ(c.delete_branch("loopr/001-loops/code-1").error().code, ErrorCode::conflict);
  EXPECT_EQ(c.archive_branch("loopr/001-loops/code-1", "code-1").error().code, ErrorCode::conflict);
}

TEST(CleanupTest, PrunesOnlyTheRecordOfAWorktreeWhoseFolderIsGone) {
  TestRepo repo;
  run_git(repo.root(), "worktree add -q -b loopr/1-loops/a .loopr/worktrees/a trunk");
  run_git(repo.root(), "worktree add -q -b loopr/1-loops/b .loopr/worktrees/b trunk");
  repo.write(".loopr/worktrees/a/big.bin", std::string(64 * 1024, 'x'));
  EXPECT_GE(disk_usage(repo.root() / ".loopr/worktrees/a"), 64u * 1024);
  EXPECT_EQ(disk_usage(repo.root() / "no-such-folder"), 0u);
  std::filesystem::remove_all(repo.root() / ".loopr/worktrees/a");
  Cleanup c(repo.root());
  EXPECT_EQ(*c.prune_registration("a"), true);
  EXPECT_EQ(*c.prune_registration("a"), false) << "gone already";
  EXPECT_EQ(*c.prune_registration("b"), false) << "its folder is there: in use";
  EXPECT_EQ(*c.prune_registration("never"), false);
  std::string list = run_git(repo.root(), "worktree list --porcelain");
  EXPECT_EQ(list.find("worktrees/a"), std::string::npos) << list;
  EXPECT_NE(list.find("worktrees/b"), std::string::npos) << list;
  EXPECT_TRUE(fsck_clean(repo.root()));
}

// Archiving renames the ref without libgit2's git_branch_move (its config match leaks, see
// RepositoryTest.DeletingBranchesHoldsNoMemory); a branch with config still gets it moved.
TEST(CleanupTest, ArchivingMovesTheBranchConfigWhenThereIsSome) {
  TestRepo repo;
  run_git(repo.root(), "branch loopr/001-loops/code-1 trunk");
  run_git(repo.root(), "branch loopr/001-loops/code-2 trunk");
  run_git(repo.root(), "config branch.loopr/001-loops/code-2.remote origin");
  Cleanup c(repo.root());
  ASSERT_EQ(*c.archive_branch("loopr/001-loops/code-1", "code-1"), "loopr/archive/code-1");
  ASSERT_EQ(*c.archive_branch("loopr/001-loops/code-2", "code-2"), "loopr/archive/code-2");
  EXPECT_EQ(git_line(repo.root(), "config --get-regexp ^branch\\\\."),
            "branch.loopr/archive/code-2.remote origin");
  EXPECT_NE(run_git(repo.root(), "reflog show loopr/archive/code-1").find("renamed"),
            std::string::npos);
}
