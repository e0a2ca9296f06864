// Undoing a work tree's changes but for the artifact (a plan loop under the claude CLI) and the
// sweep before a checkpoint, on real repositories, checked with the git CLI.
#include <sys/stat.h>
#include <unistd.h>

#include <loopr/git/repository.hpp>

#include "git/git_test_repo.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::Worktree;

TEST(UndoChanges, KeepsOnlyTheArtifactAndRestoresEverythingElse) {
  TestRepo t;
  auto wt = Worktree::open(t.root());
  ASSERT_TRUE(wt.ok());
  const std::string artifact = ".loopr/plans/001-x.plan.md";
  t.write(artifact, "# Plan\n");
  t.write("shared.txt", "changed\n");
  std::filesystem::remove(t.root() / "README.md");
  t.write("new/evil.sh", "rm -rf /\n");
  t.write("build.log", "ignored but new\n");  // *.log is ignored
  ::symlink("/etc/passwd", (t.root() / "link").c_str());
  run_git(t.root(), "add new/evil.sh");

  ASSERT_OK_AND_ASSIGN(auto undone, wt->undo_changes_except({artifact}));
  EXPECT_EQ(undone, (std::vector<std::string>{"README.md", "build.log", "link", "new/evil.sh",
                                              "shared.txt"}));
  EXPECT_EQ(t.read(artifact), "# Plan\n");
  EXPECT_EQ(t.read("shared.txt"), "line 1\nline 2\nline 3\n");
  EXPECT_EQ(t.read("README.md"), "# test repo\n");
  EXPECT_FALSE(std::filesystem::exists(t.root() / "new/evil.sh"));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(t.root() / "link")));
  EXPECT_FALSE(std::filesystem::exists(t.root() / "build.log"));
  EXPECT_TRUE(std::filesystem::exists("/etc/passwd"));
  // git agrees: only the artifact differs from HEAD.
  EXPECT_EQ(git_line(t.root(), "status --porcelain"), "?? .loopr/");
  ASSERT_OK_AND_ASSIGN(auto again, wt->undo_changes_except({artifact}));
  EXPECT_TRUE(again.empty());
}

TEST(CheckpointSweep, AFifoGitignoreNeitherHangsNorReachesTheCommit) {
  TestRepo t;
  ASSERT_OK_AND_ASSIGN(Worktree wt, Worktree::open(t.root()));
  std::filesystem::create_directories(t.root() / "sub");
  ASSERT_EQ(::mkfifo((t.root() / "sub/.gitignore").c_str(), 0644), 0);
  t.write("sub/file.txt", "kept\n");
  t.write("tool", "#!/bin/sh\n");
  ::chmod((t.root() / "tool").c_str(), 04755);
  ASSERT_OK_AND_ASSIGN(auto made, wt.checkpoint("with a fifo"));
  EXPECT_EQ(made.kind, git::CommitOutcome::Kind::committed);
  EXPECT_FALSE(
      std::filesystem::exists(std::filesystem::symlink_status(t.root() / "sub/.gitignore")));
  EXPECT_EQ(git_line(t.root(), "show --format= --name-only HEAD"), "sub/file.txt\ntool");
  struct stat st {};
  ::stat((t.root() / "tool").c_str(), &st);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

TEST(UndoChanges, AFifoGitignoreLeftByTheCliIsRemovedFirst) {
  TestRepo t;
  ASSERT_OK_AND_ASSIGN(Worktree wt, Worktree::open(t.root()));
  const std::string tracked = t.read(".gitignore");
  std::filesystem::remove(t.root() / ".gitignore");
  ASSERT_EQ(::mkfifo((t.root() / ".gitignore").c_str(), 0644), 0);
  t.write("other.txt", "new\n");
  ASSERT_OK_AND_ASSIGN(auto undone, wt.undo_changes_except({"plan.md"}));
  EXPECT_EQ(undone, (std::vector<std::string>{".gitignore", "other.txt"}));
  EXPECT_TRUE(std::filesystem::is_regular_file(t.root() / ".gitignore"));
  EXPECT_EQ(t.read(".gitignore"), tracked);
}
