// The capped readers of files loopr does not control (core/file_read.hpp): a folder the model
// writes is read never through a symlink, only a regular file is opened for reading, and a FIFO
// is never waited on.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <loopr/core/fd.hpp>
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

// The last step on its own, for a folder already open (the iteration files' reader).
TEST(FileReadTest, ANameInAnOpenFolderIsReadNeverThroughASymlinkNorFromAFifo) {
  TempDir dir;
  write_file(dir / "plan.md", "# plan\n");
  fs::create_symlink(dir / "plan.md", dir / "link.md");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  Fd folder(::open(dir.str().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(folder.ok());
  EXPECT_EQ(read_file_at(folder.get(), "plan.md", 100, "plan.md").bytes, "# plan\n");
  EXPECT_EQ(read_file_at(folder.get(), "link.md", 100, "link.md").why, FileProblem::refused);
  EXPECT_EQ(read_file_at(folder.get(), "fifo", 100, "fifo").why, FileProblem::refused);
  EXPECT_EQ(read_file_at(folder.get(), "none", 100, "none").why, FileProblem::missing);
  EXPECT_EQ(read_file_at(-1, "plan.md", 100, "plan.md").why, FileProblem::missing);
  FileBytes f = read_file_at(folder.get(), "plan.md", 2, "plan.md");
  EXPECT_EQ(f.bytes, "# ");
  EXPECT_TRUE(f.truncated);
}
