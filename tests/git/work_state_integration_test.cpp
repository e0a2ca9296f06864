// An iteration's prompt state from objects alone (WorkStateOptions::clean_at, issue 32): after a
// checkpoint that nothing wrote over, the state is the one a read of the work tree gives,
// without that read; whenever the work tree may differ from HEAD it is swept and read as before.
#include <sys/stat.h>

#include <loopr/core/repo_paths.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/work_tree_state.hpp>
#include <loopr/git/worktree.hpp>

#include "git/git_test_repo.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::Repository;
using loopr::git::WorkState;
using loopr::git::WorkStateOptions;
using loopr::git::Worktree;

namespace {

WorkStateOptions state_options(const std::string& since, const std::string& clean_at) {
  WorkStateOptions o;
  o.since = since;
  o.clean_at = clean_at;
  o.max_last_paths = 20;
  o.log_entries = 10;
  return o;
}

std::string checkpoint(const Worktree& wt, const std::string& message) {
  auto made = Worktree::checkpoint_at(wt.path(), message);
  EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().message);
  return made.ok() ? made->sha : std::string();
}

}  // namespace

TEST(WorkStateTest, AfterACheckpointObjectsAloneGiveTheSameStateWithoutReadingTheWorkTree) {
  TestRepo t;
  Worktree wt = integration_loop_worktree(t.open());
  const std::string start = git_line(wt.path(), "rev-parse HEAD");
  write_file(wt.path() / "tool.sh", "#!/bin/sh\necho tool\n");
  write_file(wt.path() / "doc/notes.txt", "first\n");
  checkpoint(wt, "iteration 1");
  // Every kind of change against where the loop started: a file in a new folder, an edit, a
  // deletion, a rename, an executable bit, a symlink, a binary file; an ignored file and a
  // private folder's file stay out of both.
  write_file(wt.path() / "src/new/a.c", "int a;\n");
  write_file(wt.path() / "doc/notes.txt", "first\nsecond\n");
  std::filesystem::remove(wt.path() / "README.md");
  std::filesystem::rename(wt.path() / "shared.txt", wt.path() / "shared-renamed.txt");
  ASSERT_EQ(::chmod((wt.path() / "tool.sh").c_str(), 0755), 0);
  std::filesystem::create_symlink("tool.sh", wt.path() / "link");
  write_file(wt.path() / "blob.bin", std::string("\x01\x00\x02zz", 5));
  write_file(wt.path() / "run.log", "ignored\n");
  write_file(wt.path() / ".loopr/logs/x.txt", "private\n");
  const std::string head = checkpoint(wt, "iteration 2");

  ASSERT_OK_AND_ASSIGN(WorkState read,
                       Worktree::read_work_state(wt.path(), state_options(start, "")));
  const std::uint64_t before = git::work_tree_reads();
  ASSERT_OK_AND_ASSIGN(WorkState known,
                       Worktree::read_work_state(wt.path(), state_options(start, head)));
  EXPECT_EQ(git::work_tree_reads(), before) << "the work tree was read";

  EXPECT_EQ(known.changes, read.changes);
  EXPECT_EQ(known.diff, read.diff);
  EXPECT_EQ(known.last_changes, read.last_changes);
  EXPECT_EQ(known.log, read.log);
  // What both show is the whole work (checked by the CLI's view of the same change).
  EXPECT_EQ(read.changes.size(), lines_of(run_git(wt.path(), "diff --name-only " + start)).size());
  for (const char* line :
       {"A src/new/a.c", "D README.md", "R shared.txt -> shared-renamed.txt", "A link"})
    EXPECT_NE(std::find(read.changes.begin(), read.changes.end(), line), read.changes.end())
        << line;
  EXPECT_NE(read.diff.find("+second"), std::string::npos);
}

TEST(WorkStateTest, TheWorkTreeIsReadWhenHeadMovedSinceTheCheckpoint) {
  TestRepo t;
  Worktree wt = integration_loop_worktree(t.open());
  const std::string start = git_line(wt.path(), "rev-parse HEAD");
  write_file(wt.path() / "a.txt", "a\n");
  const std::string first = checkpoint(wt, "iteration 1");
  // Someone else committed, and left a file uncommitted: the checkpoint's sha is stale.
  write_file(wt.path() / "b.txt", "b\n");
  t.commit_all("by hand", wt.path());
  write_file(wt.path() / "c.txt", "c\n");

  const std::uint64_t before = git::work_tree_reads();
  ASSERT_OK_AND_ASSIGN(WorkState state,
                       Worktree::read_work_state(wt.path(), state_options(start, first)));
  EXPECT_EQ(git::work_tree_reads(), before + 1);
  EXPECT_EQ(state.changes, (std::vector<std::string>{"A a.txt", "A b.txt", "A c.txt"}));
}

TEST(WorkStateTest, TheWorkTreeIsReadWhereTheSandboxMountsCheckoutPaths) {
  // Mount points of the executor's checkout paths stay untracked in the work tree, so a read of
  // it may show more than HEAD's tree: the state is read from the work tree there.
  TestRepo t;
  Worktree wt = integration_loop_worktree(t.open());
  const std::string start = git_line(wt.path(), "rev-parse HEAD");
  write_file(t.root() / ".git/worktrees/code-1" / kWorktreeMountsFile, "node_modules\n");
  const std::string head = checkpoint(wt, "iteration 1");
  write_file(wt.path() / "node_modules", "");

  const std::uint64_t before = git::work_tree_reads();
  ASSERT_OK(Worktree::read_work_state(wt.path(), state_options(start, head)));
  EXPECT_EQ(git::work_tree_reads(), before + 1);
}

TEST(WorkStateTest, AReadOfTheWorkTreeSweepsItFirst) {
  TestRepo t;
  Worktree wt = integration_loop_worktree(t.open());
  const std::string start = git_line(wt.path(), "rev-parse HEAD");
  // A FIFO `.gitignore` would block libgit2's read for good.
  std::filesystem::remove(wt.path() / ".gitignore");
  ASSERT_EQ(::mkfifo((wt.path() / ".gitignore").c_str(), 0644), 0);
  ASSERT_OK_AND_ASSIGN(WorkState state,
                       Worktree::read_work_state(wt.path(), state_options(start, "")));
  EXPECT_FALSE(std::filesystem::exists(wt.path() / ".gitignore"));
  EXPECT_EQ(state.changes, (std::vector<std::string>{"D .gitignore"}));
}
