// The sandbox against a real folder with real symlinks: one test per trick.
#include <gtest/gtest.h>

#include <loopr/tools/sandbox.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::tools;
using namespace loopr::testing;
namespace fs = std::filesystem;

class SandboxTest : public ::testing::Test {
 protected:
  TempDir outside{"loopr-outside"};
  TempDir dir{"loopr-wt"};
  fs::path root = dir / "wt";
  void SetUp() override {
    fs::create_directories(root / "src");
    write_file(root / "src/a.txt", "a");
    write_file(root / ".git", "gitdir: /somewhere\n");
    write_file(outside / "secret.txt", "secret");
  }
  std::string refused(const std::string& path) {
    Sandbox box(root);
    auto r = box.resolve(path);
    EXPECT_FALSE(r.ok()) << path << " resolved to " << (r.ok() ? r->string() : "");
    return r.ok() ? "" : r.error().message;
  }
};

TEST_F(SandboxTest, PlainPathsResolveInside) {
  Sandbox box(root);
  EXPECT_EQ(*box.resolve("src/a.txt"), fs::canonical(root / "src/a.txt"));
  EXPECT_EQ(*box.resolve("./src/../src/a.txt"), fs::canonical(root / "src/a.txt"));
  EXPECT_EQ(*box.resolve("new/dir/file.txt"), fs::canonical(root) / "new/dir/file.txt");
  EXPECT_EQ(*box.resolve("."), fs::canonical(root));
  EXPECT_EQ(box.relative(*box.resolve("src/a.txt")), "src/a.txt");
}

TEST_F(SandboxTest, DotDotThatLeavesIsRefused) {
  EXPECT_NE(refused("../x").find("leaves the working tree"), std::string::npos);
  refused("src/../../x");
  refused("src/../../../etc/passwd");
}

TEST_F(SandboxTest, AbsolutePathsAreRefused) {
  EXPECT_NE(refused("/etc/passwd").find("absolute"), std::string::npos);
  refused((fs::canonical(root) / "src/a.txt").string());  // even one inside: say it relative
  refused("~/x");
}

TEST_F(SandboxTest, NulBytesAreRefused) {
  EXPECT_NE(refused(std::string("src/a.txt\0../../x", 17)).find("NUL"), std::string::npos);
}

TEST_F(SandboxTest, DotGitIsRefused) {
  refused(".git");
  refused(".git/config");
  refused("sub/.git/hooks/pre-commit");
}

TEST_F(SandboxTest, SymlinkToAFileOutsideIsRefused) {
  fs::create_symlink(outside / "secret.txt", root / "link.txt");
  EXPECT_NE(refused("link.txt").find("outside the working tree"), std::string::npos);
}

TEST_F(SandboxTest, SymlinkedFolderOutsideIsRefused) {
  fs::create_directory_symlink(outside.path(), root / "out");
  refused("out/secret.txt");
  refused("out/new-file.txt");  // creating through it, too
}

TEST_F(SandboxTest, ChainOfSymlinkedFoldersIsFollowed) {
  fs::create_directories(root / "d1");
  fs::create_directory_symlink(outside.path(), root / "d1/hop2");
  fs::create_directory_symlink(root / "d1", root / "hop1");
  refused("hop1/hop2/secret.txt");
  // A chain that stays inside is fine.
  fs::create_directory_symlink(root / "src", root / "d1/inner");
  Sandbox box(root);
  EXPECT_TRUE(box.resolve("hop1/inner/a.txt").ok());
}

TEST_F(SandboxTest, DanglingSymlinkPointingOutIsRefused) {
  fs::create_symlink(outside / "will-be-created.txt", root / "dangling");
  refused("dangling");
}

TEST_F(SandboxTest, RelativeSymlinkEscapingIsRefused) {
  fs::create_symlink("../../" + outside.path().filename().string() + "/secret.txt",
                     root / "src/rel");
  refused("src/rel");
}

TEST_F(SandboxTest, SymlinkIntoDotGitIsRefused) {
  fs::create_directories(root / "realgit");
  fs::remove(root / ".git");
  fs::create_directories(root / ".git/hooks");
  fs::create_directory_symlink(root / ".git", root / "g");
  EXPECT_NE(refused("g/hooks/pre-commit").find(".git"), std::string::npos);
}

TEST_F(SandboxTest, SymlinkLoopIsAnErrorNotAHang) {
  fs::create_symlink(root / "loop2", root / "loop1");
  fs::create_symlink(root / "loop1", root / "loop2");
  refused("loop1");
}
