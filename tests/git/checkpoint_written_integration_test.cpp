// A checkpoint from the paths loopr's file tools wrote (Worktree::checkpoint_written, issue 32):
// the same commit `git add -A` would make of them, without walking the work tree; a full
// checkpoint whenever HEAD is not the commit after which only those tools wrote.
#include <sys/stat.h>

#include <chrono>

#include <loopr/git/branches.hpp>
#include <loopr/git/work_tree_state.hpp>
#include <loopr/git/worktree.hpp>

#include "git/git_test_repo.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::CommitOutcome;
using loopr::git::Repository;
using loopr::git::Worktree;

TEST(CheckpointWrittenTest, StagesTheWrittenPathsAsGitAddAllWouldWithoutAWalk) {
  TestRepo t;
  Worktree wt = integration_loop_worktree(t.open());
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
  Worktree wt = integration_loop_worktree(t.open());
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

namespace {

// The index file's inode: libgit2 writes a new index as index.lock and renames it, so a new
// inode means the index was written again.
ino_t index_inode(const Worktree& wt) {
  const std::string file = git_line(wt.path(), "rev-parse --absolute-git-dir");
  struct stat st {};
  EXPECT_EQ(::stat((file + "/index").c_str(), &st), 0) << file;
  return st.st_ino;
}

// Every file of the work tree a minute older, so no index entry is racily clean (its mtime not
// older than the index file's): git's rule would then restage it, and the index changes.
void age_work_tree(const Worktree& wt) {
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::minutes(1);
  for (const auto& e : std::filesystem::recursive_directory_iterator(wt.path())) {
    if (e.path().filename() == ".git") continue;
    if (e.is_regular_file()) std::filesystem::last_write_time(e.path(), old);
  }
}

}  // namespace

// Issue 47: each file an iteration creates costs ~0.6 ms on ext4; a checkpoint that stages
// nothing new leaves the index file as it is instead of writing the same one again.
TEST(CheckpointWrittenTest, NothingStagedLeavesTheIndexFileAsItIs) {
  TestRepo t;
  Worktree wt = integration_loop_worktree(t.open());
  age_work_tree(wt);
  ASSERT_OK_AND_ASSIGN(CommitOutcome first, Worktree::checkpoint_at(wt.path(), "iteration 1"));
  const ino_t written = index_inode(wt);

  // The walk finds nothing changed: the same index file.
  ASSERT_OK_AND_ASSIGN(CommitOutcome walked, Worktree::checkpoint_at(wt.path(), "iteration 2"));
  EXPECT_EQ(walked.kind, CommitOutcome::Kind::nothing_to_commit);
  EXPECT_EQ(index_inode(wt), written) << "the index was written again with nothing staged";
  // Nor from the tools' list: nothing written, or only a private path.
  ASSERT_OK_AND_ASSIGN(CommitOutcome listed,
                       Worktree::checkpoint_written(wt.path(), "iteration 3", first.sha, {}));
  EXPECT_EQ(listed.kind, CommitOutcome::Kind::nothing_to_commit);
  write_file(wt.path() / ".loopr/logs/x.txt", "private\n");
  ASSERT_OK_AND_ASSIGN(CommitOutcome private_only,
                       Worktree::checkpoint_written(wt.path(), "iteration 4", first.sha,
                                                    {".loopr/logs/x.txt"}));
  EXPECT_EQ(private_only.kind, CommitOutcome::Kind::nothing_to_commit);
  EXPECT_EQ(index_inode(wt), written);
  EXPECT_EQ(run_git(wt.path(), "status --porcelain"), "");

  // Something staged: the index is written, and the CLI sees the checkpoint clean.
  write_file(wt.path() / "new.txt", "new\n");
  ASSERT_OK_AND_ASSIGN(CommitOutcome made, Worktree::checkpoint_at(wt.path(), "iteration 5"));
  EXPECT_EQ(made.kind, CommitOutcome::Kind::committed);
  EXPECT_NE(index_inode(wt), written);
  EXPECT_EQ(run_git(wt.path(), "status --porcelain"), "");
  EXPECT_EQ(run_git(wt.path(), "ls-files --stage new.txt").empty(), false);
  EXPECT_TRUE(fsck_clean(t.root()));
}
