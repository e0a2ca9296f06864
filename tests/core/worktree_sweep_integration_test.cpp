// The sweep on a real folder: real FIFOs, a bound Unix socket, setuid and setgid files, a
// setuid file with a second hard link, a read-only folder around a FIFO.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include <loopr/core/worktree_sweep.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using loopr::testing::TempDir;
using loopr::testing::write_file;
namespace fs = std::filesystem;

namespace {

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st.st_mode;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Writes `text` to `p` and gives it `mode`, setuid and setgid bits included.
void write_file_with_mode(const fs::path& p, const std::string& text, mode_t mode) {
  write_file(p, text);
  ::chmod(p.c_str(), mode);
}

}  // namespace

TEST(WorktreeSweep, RemovesFifosSocketsAndClearsSetuidBits) {
  TempDir dir("loopr-sweep");
  fs::path root = dir.path();
  write_file(root / "keep.txt", "kept\n");
  write_file_with_mode(root / "src/tool", "#!/bin/sh\n", 06755);
  write_file_with_mode(root / "sgid", "x", 02750);
  ASSERT_EQ(::mkfifo((root / ".gitignore").c_str(), 0644), 0);
  fs::create_directories(root / "deep/a");
  ASSERT_EQ(::mkfifo((root / "deep/a/b").c_str(), 0644), 0);
  fs::create_symlink("keep.txt", root / "link");
  fs::create_symlink("/nonexistent", root / "dangling");
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", (root / "server.sock").c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::close(s);
  // A FIFO in a folder the model made read-only.
  fs::create_directories(root / "ro");
  ASSERT_EQ(::mkfifo((root / "ro/pipe").c_str(), 0644), 0);
  ::chmod((root / "ro").c_str(), 0555);
  // .git is git's: never touched.
  fs::create_directories(root / ".git");
  ASSERT_EQ(::mkfifo((root / ".git/fifo").c_str(), 0644), 0);

  SweepReport r = sweep_worktree(root);
  EXPECT_TRUE(r.failed.empty()) << describe(r);
  EXPECT_TRUE(contains(r.removed, ".gitignore (a FIFO)")) << describe(r);
  EXPECT_TRUE(contains(r.removed, "deep/a/b (a FIFO)")) << describe(r);
  EXPECT_TRUE(contains(r.removed, "server.sock (a socket)")) << describe(r);
  EXPECT_TRUE(contains(r.removed, "ro/pipe (a FIFO)")) << describe(r);
  EXPECT_TRUE(contains(r.stripped, "src/tool")) << describe(r);
  EXPECT_TRUE(contains(r.stripped, "sgid")) << describe(r);
  EXPECT_FALSE(fs::exists(fs::symlink_status(root / ".gitignore")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(root / "server.sock")));
  EXPECT_EQ(mode_of(root / "src/tool") & 07777, 0755u);
  EXPECT_EQ(mode_of(root / "sgid") & 07777, 0750u);
  EXPECT_TRUE(fs::is_symlink(root / "link"));
  EXPECT_TRUE(fs::is_symlink(root / "dangling"));
  EXPECT_TRUE(fs::exists(root / "keep.txt"));
  EXPECT_TRUE(S_ISFIFO(mode_of(root / ".git/fifo")));
  std::string said = describe(r);
  EXPECT_NE(said.find("[loopr: removed from the worktree"), std::string::npos) << said;
  EXPECT_NE(said.find("cleared the setuid/setgid bits of"), std::string::npos) << said;
  // Nothing left: a second sweep says nothing.
  EXPECT_TRUE(sweep_worktree(root).empty());
  EXPECT_EQ(describe(sweep_worktree(root)), "");
}

TEST(WorktreeSweep, ASetuidFileWithAnotherLinkLosesOnlyItsNameHere) {
  TempDir dir("loopr-sweep");
  fs::path outside = dir.path() / "outside";
  fs::path root = dir.path() / "wt";
  write_file_with_mode(outside / "passwd", "binary", 04755);
  fs::create_directories(root);
  fs::create_hard_link(outside / "passwd", root / "x");
  SweepReport r = sweep_worktree(root);
  EXPECT_FALSE(fs::exists(root / "x"));
  EXPECT_EQ(mode_of(outside / "passwd") & 07777, 04755u) << "the other name keeps its mode";
  ASSERT_EQ(r.removed.size(), 1u) << describe(r);
}

// libgit2 opens .gitignore, .gitattributes and .gitmodules through a symlink: one leading to a
// FIFO outside (or to anything but a file inside) goes; one leading to a file inside stays.
TEST(WorktreeSweep, ASymlinkedGitFileStaysOnlyWhenItLeadsToAFileInside) {
  TempDir dir("loopr-sweep");
  fs::path outside = dir.path() / "outside";
  fs::path root = dir.path() / "wt";
  fs::create_directories(outside);
  fs::create_directories(root / "sub");
  ASSERT_EQ(::mkfifo((outside / "fifo").c_str(), 0644), 0);
  write_file(outside / "rules", "*.o\n");
  write_file(root / "shared/gitignore", "*.tmp\n");
  fs::create_symlink(outside / "fifo", root / ".gitignore");
  fs::create_symlink("../../outside/rules", root / "sub/.gitattributes");
  fs::create_symlink("/nonexistent", root / "sub/.gitignore");
  fs::create_symlink("sub", root / ".gitmodules");  // a folder
  fs::create_symlink("../shared/gitignore", root / "shared/.gitignore");
  fs::create_symlink(outside / "fifo", root / "other-link");  // not a file git reads

  SweepReport r = sweep_worktree(root);
  EXPECT_TRUE(r.failed.empty()) << describe(r);
  for (const char* gone : {".gitignore", "sub/.gitattributes", "sub/.gitignore", ".gitmodules"}) {
    EXPECT_FALSE(fs::exists(fs::symlink_status(root / gone))) << gone;
    EXPECT_TRUE(contains(r.removed, std::string(gone) +
                                        " (a symlink to something outside the worktree or not a "
                                        "file)"))
        << gone << "\n"
        << describe(r);
  }
  EXPECT_TRUE(fs::is_symlink(root / "shared/.gitignore"));
  EXPECT_TRUE(fs::is_symlink(root / "other-link"));
  EXPECT_TRUE(S_ISFIFO(mode_of(outside / "fifo"))) << "nothing outside is touched";
  EXPECT_EQ(r.removed.size(), 4u) << describe(r);
}

// A folder deeper than the walk goes is not known to be clean: reported, so nothing reads it.
TEST(WorktreeSweep, AFolderTooDeepToWalkIsReportedNotSkipped) {
  TempDir dir("loopr-sweep");
  fs::path root = dir.path();
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "d/";
  fs::create_directories(root / deep);
  ASSERT_EQ(::mkfifo((root / deep / ".gitignore").c_str(), 0644), 0);
  SweepReport r = sweep_worktree(root);
  ASSERT_EQ(r.failed.size(), 1u) << describe(r);
  EXPECT_NE(r.failed[0].find("nested more than 256 deep): not checked"), std::string::npos)
      << r.failed[0];
  EXPECT_NE(describe(r).find("could not remove or clear"), std::string::npos);
}

TEST(WorktreeSweep, ListsWhatItLeavesFolderFirstWithTheStatDataAfterItsChanges) {
  TempDir dir("loopr-sweep");
  fs::path root = dir.path();
  write_file(root / "a/b/file.txt", "x\n");
  write_file_with_mode(root / "suid", "#!/bin/sh\n", 04755);
  ASSERT_EQ(::mkfifo((root / "a/pipe").c_str(), 0644), 0);
  fs::create_symlink("a/b/file.txt", root / "link");
  write_file(root / ".git/HEAD", "ref: refs/heads/x\n");
  fs::create_directories(root / "shut");
  write_file(root / "shut/hidden.txt", "x\n");

  std::vector<std::string> order;
  std::map<std::string, mode_t> modes;
  const SweepVisitor visit = [&](const std::string& rel, const struct stat* st) {
    order.push_back(rel);
    if (st) modes[rel] = st->st_mode;
  };
  SweepReport r = sweep_worktree(root, &visit);
  EXPECT_TRUE(r.failed.empty()) << describe(r);
  EXPECT_TRUE(contains(r.removed, "a/pipe (a FIFO)"));
  // What was removed is not listed, nor is `.git`; a folder comes before what it holds.
  EXPECT_FALSE(contains(order, "a/pipe"));
  EXPECT_FALSE(contains(order, ".git"));
  EXPECT_FALSE(contains(order, ".git/HEAD"));
  const auto at = [&](const std::string& rel) {
    return std::find(order.begin(), order.end(), rel) - order.begin();
  };
  EXPECT_LT(at("a"), at("a/b"));
  EXPECT_LT(at("a/b"), at("a/b/file.txt"));
  EXPECT_EQ(modes.count("a"), 0u) << "a folder comes with no stat data";
  EXPECT_TRUE(S_ISREG(modes.at("a/b/file.txt")));
  EXPECT_TRUE(S_ISLNK(modes.at("link")));
  EXPECT_EQ(modes.at("suid") & (S_ISUID | S_ISGID), 0u) << "the stat data after the bits went";

  // A folder the walk cannot open: with a list asked for, that is a failure (the list would not
  // be the whole worktree); a plain sweep stays as it was.
  if (::geteuid() != 0) {
    ::chmod((root / "shut").c_str(), 0);
    EXPECT_FALSE(sweep_worktree(root, &visit).failed.empty());
    EXPECT_TRUE(sweep_worktree(root).failed.empty());
    ::chmod((root / "shut").c_str(), 0755);
  }
}
