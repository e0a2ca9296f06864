// The capped readers of files loopr does not control (core/file_read.hpp): a folder the model
// writes is read never through a symlink; a path the person names follows their symlinks; neither
// opens anything but a regular file for reading, and neither waits on a FIFO.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <loopr/core/file_read.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::testing;
namespace fs = std::filesystem;

TEST(FileReadTest, APathInsideIsRelativeWithoutDotDotOrGit) {
  EXPECT_TRUE(is_inside_path("plan.md"));
  EXPECT_TRUE(is_inside_path(".loopr/plans/001-x.plan.md"));
  EXPECT_TRUE(is_inside_path("./a//b.md"));
  EXPECT_FALSE(is_inside_path(""));
  EXPECT_FALSE(is_inside_path("."));
  EXPECT_FALSE(is_inside_path("/etc/passwd"));
  EXPECT_FALSE(is_inside_path("a/../../b.md"));
  EXPECT_FALSE(is_inside_path(".git/config"));
  EXPECT_FALSE(is_inside_path(std::string("a\0b", 3)));
}

TEST(FileReadTest, InsideAFolderOnlyARegularFileReachedWithoutASymlinkIsRead) {
  TempDir dir;
  write_file(dir / "wt/docs/plan.md", "# plan\n");
  write_file(dir / "secret", "SECRET\n");
  FileBytes f = read_file_inside(dir / "wt", "docs/plan.md", 100);
  EXPECT_EQ(f.bytes, "# plan\n");
  EXPECT_EQ(f.why, FileProblem::none);
  EXPECT_EQ(read_file_inside(dir / "wt", "docs/none.md", 100).why, FileProblem::missing);

  fs::create_symlink(dir / "secret", dir / "wt/docs/link.md");
  f = read_file_inside(dir / "wt", "docs/link.md", 100);
  EXPECT_FALSE(f.bytes);
  EXPECT_EQ(f.why, FileProblem::refused);
  fs::create_symlink(dir / "wt/docs", dir / "wt/folder");
  EXPECT_EQ(read_file_inside(dir / "wt", "folder/plan.md", 100).why, FileProblem::refused);
  ASSERT_EQ(::mkfifo((dir / "wt/docs/fifo.md").c_str(), 0600), 0);
  EXPECT_EQ(read_file_inside(dir / "wt", "docs/fifo.md", 100).why, FileProblem::refused);
  EXPECT_EQ(read_file_inside(dir / "wt", "docs", 100).why, FileProblem::refused);
  EXPECT_EQ(read_file_inside(dir / "wt", "../secret", 100).why, FileProblem::refused);

  f = read_file_inside(dir / "wt", "docs/plan.md", 3);
  EXPECT_EQ(f.bytes, "# p");
  EXPECT_TRUE(f.truncated);
}

TEST(FileReadTest, APersonsPathFollowsTheirSymlinksButOpensOnlyARegularFile) {
  TempDir dir;
  write_file(dir / "notes/plan.md", "# plan\n");
  fs::create_symlink(dir / "notes/plan.md", dir / "plan.md");
  EXPECT_EQ(read_regular_file(dir / "plan.md", 100).bytes, "# plan\n");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(read_regular_file(dir / "fifo", 100).why, FileProblem::refused);
  EXPECT_EQ(read_regular_file(dir / "notes", 100).why, FileProblem::refused);
  EXPECT_EQ(read_regular_file(dir / "none", 100).why, FileProblem::missing);
  FileBytes f = read_regular_file(dir / "plan.md", 2);
  EXPECT_EQ(f.bytes, "# ");
  EXPECT_TRUE(f.truncated);
}
