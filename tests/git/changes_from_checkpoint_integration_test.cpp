// The protection check's changes read after a clean checkpoint (issue 47 item 3): when the
// checkpoint staged from a complete sweep after a command and only loopr's file tools wrote
// since, path_changes_since reads git's objects, the index and the written and untracked paths
// instead of walking the work tree. It decides `protect.*`, so every record must be exactly the
// walk's: each test computes both on the same work tree and compares them whole.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <loopr/core/clean_checkpoint.hpp>
#include <loopr/core/sweep_handoff.hpp>
#include <loopr/core/worktree_sweep.hpp>
#include <loopr/git/clean_changes.hpp>
#include <loopr/git/work_tree_state.hpp>
#include <loopr/git/worktree.hpp>

#include "git/git_test_repo.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::Worktree;
namespace fs = std::filesystem;

namespace {

std::string describe(const std::vector<PathChange>& changes) {
  std::string out;
  for (const PathChange& c : changes) {
    out += std::string(to_string(c.kind)) + " " + c.path;
    if (!c.old_path.empty()) out += " (from " + c.old_path + ")";
    if (c.after) out += " after=" + *c.after;
    out += "\n";
  }
  return out;
}

class ChangesFromCheckpointTest : public ::testing::Test {
 protected:
  TestRepo repo;
  fs::path wt = repo.root();
  std::string start;
  const std::vector<std::string> keyed = {"pyproject.toml"};

  void SetUp() override {
    repo.write(".gitignore", "*.log\ncache/\nbuild/\nconftest.py\n");
    for (int i = 0; i < 12; ++i) repo.write("src/f" + std::to_string(i) + ".c", "x\n");
    repo.write("tests/test_a.py", "def test_a(): pass\n");
    repo.write("docs/guide.md", "a long enough guide to be found again when renamed\n");
    repo.write("pyproject.toml", "[tool.pytest]\naddopts = '-q'\n");
    repo.write("run.sh", "echo run\n");
    repo.write("build/keep.txt", "tracked in an ignored folder\n");
    ASSERT_EQ(::symlink("src/f0.c", (wt / "link").c_str()), 0);
    run_git(wt, "add -A && git add -f build/keep.txt");
    run_git(wt, "commit -q -m base");
    start = git_line(wt, "rev-parse HEAD");
  }

  // What a command leaves: every kind of change, ignored files and folders among them.
  void command_writes() {
    repo.write("src/f1.c", "changed\n");
    fs::remove(wt / "src/f2.c");
    repo.write("src/new.c", "new\n");
    repo.write("out.log", "ignored\n");
    repo.write("conftest.py", "import os  # ignored, and a test harness all the same\n");
    repo.write("build/out.o", "ignored in a tracked folder\n");
    repo.write("cache/a/b.txt", "an ignored folder\n");
    fs::create_directories(wt / "cache2");
    repo.write("only-ignored/x.log", "an untracked folder of ignored files\n");
    fs::rename(wt / "docs/guide.md", wt / "docs/renamed.md");
    ASSERT_EQ(::chmod((wt / "run.sh").c_str(), 0755), 0);
  }

  // The checkpoint an iteration makes after its sandboxed validation command: the command's
  // sweep handed over, nothing run since.
  std::string clean_checkpoint() {
    SweptListing listing;
    const SweepVisitor keep = [&listing](const std::string& rel, const struct stat* st) {
      listing.add(rel, st);
    };
    EXPECT_TRUE(sweep_worktree(wt, &keep).failed.empty());
    hand_over_sweep(wt, std::move(listing));
    auto made = Worktree::checkpoint_at(wt, "checkpoint", /*after_command=*/true);
    EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().message);
    EXPECT_EQ(clean_checkpoints(), 1u) << "the checkpoint kept no clean state";
    return made.ok() ? made->sha : std::string();
  }

  // The changes read from the clean checkpoint `sha` with `written`, then by a walk: the same.
  std::vector<PathChange> both_ways(const std::string& sha, const std::vector<std::string>& written,
                                    bool expect_fast = true) {
    auto tree = Worktree::open(wt);
    EXPECT_TRUE(tree.ok());
    const std::uint64_t fast_before = git::changes_read_from_checkpoint();
    const std::uint64_t walks_before = git::work_tree_reads();
    const git::WrittenSince since{sha, written};
    auto fast = git::path_changes_after(*tree, start, keyed, since);
    EXPECT_TRUE(fast.ok()) << (fast.ok() ? "" : fast.error().message);
    EXPECT_EQ(git::changes_read_from_checkpoint() - fast_before, expect_fast ? 1u : 0u);
    EXPECT_EQ(git::work_tree_reads() - walks_before, expect_fast ? 0u : 1u);
    EXPECT_EQ(clean_checkpoints(), 0u) << "the clean state outlived the check that took it";
    auto walked = tree->path_changes_since(start, keyed);
    EXPECT_TRUE(walked.ok());
    if (!fast.ok() || !walked.ok()) return {};
    EXPECT_EQ(*fast, *walked) << "from the checkpoint:\n"
                              << describe(*fast) << "by a walk:\n"
                              << describe(*walked);
    return *walked;
  }

  static bool has(const std::vector<PathChange>& changes, const std::string& path,
                  PathChange::Kind kind) {
    for (const PathChange& c : changes)
      if (c.path == path && c.kind == kind) return true;
    return false;
  }
};

}  // namespace

TEST_F(ChangesFromCheckpointTest, NothingWrittenSinceIsTheWalksChangeWithoutAWalk) {
  command_writes();
  const std::string sha = clean_checkpoint();
  auto changes = both_ways(sha, {});
  // The ignored harness file the command left is still seen (never committed).
  EXPECT_TRUE(has(changes, "conftest.py", PathChange::Kind::added)) << describe(changes);
  EXPECT_TRUE(has(changes, "docs/renamed.md", PathChange::Kind::renamed)) << describe(changes);
}

// The file tools' writes since: protected files changed, new folders, writes into ignored and
// untracked folders, a tracked file written back to what it was.
// proves S1.25
TEST_F(ChangesFromCheckpointTest, WhatTheToolsWroteSinceIsTheWalksChange) {
  command_writes();
  const std::string sha = clean_checkpoint();
  repo.write("tests/test_a.py", "def test_a(): assert True\n");
  repo.write("tests/test_b.py", "def test_b(): pass\n");
  repo.write("pyproject.toml", "[tool.pytest]\naddopts = '-x'\n");
  repo.write("deep/new/dir/file.txt", "new\n");
  repo.write("cache/a/c.txt", "into an ignored folder\n");
  repo.write("build/more.o", "into a tracked ignored folder\n");
  repo.write("only-ignored/visible.txt", "now not only ignored\n");
  repo.write("src/f3.c", "x\n");
  repo.write("x.log", "ignored at the top\n");
  auto changes = both_ways(
      sha, {"tests/test_a.py", "tests/test_b.py", "pyproject.toml", "deep/new/dir/file.txt",
            "cache/a/c.txt", "build/more.o", "only-ignored/visible.txt", "src/f3.c", "x.log"});
  EXPECT_TRUE(has(changes, "tests/test_a.py", PathChange::Kind::modified)) << describe(changes);
  EXPECT_TRUE(has(changes, "tests/test_b.py", PathChange::Kind::added)) << describe(changes);
  EXPECT_TRUE(has(changes, "pyproject.toml", PathChange::Kind::modified)) << describe(changes);
}

// A protected file deleted or turned into a symlink by what ran before the checkpoint, and
// then a tool writing where the symlink was: all seen as the walk sees them.
// proves S1.25
TEST_F(ChangesFromCheckpointTest, DeletedAndSymlinkedProtectedFilesAreTheWalksChange) {
  fs::remove(wt / "tests/test_a.py");
  fs::remove(wt / "pyproject.toml");
  ASSERT_EQ(::symlink("/etc/hostname", (wt / "pyproject.toml").c_str()), 0);
  fs::remove(wt / "run.sh");
  ASSERT_EQ(::symlink("tests", (wt / "run.sh").c_str()), 0);
  const std::string sha = clean_checkpoint();
  auto changes = both_ways(sha, {});
  EXPECT_TRUE(has(changes, "tests/test_a.py", PathChange::Kind::deleted)) << describe(changes);
  EXPECT_TRUE(has(changes, "pyproject.toml", PathChange::Kind::mode_changed) ||
              has(changes, "pyproject.toml", PathChange::Kind::modified))
      << describe(changes);

  fs::remove(wt / "run.sh");
  repo.write("run.sh", "echo replaced\n");
  const std::string again = clean_checkpoint();
  repo.write("tests/test_a.py", "back\n");
  both_ways(again, {"tests/test_a.py"});
}

// What the clean state rests on gone: HEAD moved, the index file rewritten, or a command run
// in the worktree (executor.cpp drops it): the changes come from a walk, and are still all seen.
// proves S1.25
TEST_F(ChangesFromCheckpointTest, WithoutItsPremiseTheCheckWalks) {
  command_writes();
  std::string sha = clean_checkpoint();
  repo.write("tests/test_a.py", "changed behind loopr's back, then committed\n");
  run_git(wt, "commit -q -am by-hand");
  both_ways(sha, {}, /*expect_fast=*/false);

  sha = clean_checkpoint();
  repo.write("tests/test_a.py", "staged behind loopr's back\n");
  run_git(wt, "add tests/test_a.py");
  auto changes = both_ways(sha, {}, /*expect_fast=*/false);
  EXPECT_TRUE(has(changes, "tests/test_a.py", PathChange::Kind::modified)) << describe(changes);

  sha = clean_checkpoint();
  drop_clean_checkpoint(wt / "src");  // a command started in a folder of the worktree
  both_ways(sha, {}, /*expect_fast=*/false);

  sha = clean_checkpoint();
  both_ways("0123456789012345678901234567890123456789", {}, /*expect_fast=*/false);

  sha = clean_checkpoint();
  both_ways(sha, {"../outside"}, /*expect_fast=*/false);
}

// A checkpoint that did not stage from a handed-over sweep (a walk of its own, or the tools'
// paths) keeps no clean state, and replaces the one before.
TEST_F(ChangesFromCheckpointTest, OnlyACheckpointFromAHandedOverSweepKeepsIt) {
  clean_checkpoint();
  repo.write("src/f1.c", "by hand\n");
  ASSERT_TRUE(Worktree::checkpoint_at(wt, "walked").ok());
  EXPECT_EQ(clean_checkpoints(), 0u);
  clean_checkpoint();
  const std::string head = git_line(wt, "rev-parse HEAD");
  repo.write("src/f1.c", "by a tool\n");
  ASSERT_TRUE(Worktree::checkpoint_written(wt, "written", head, {"src/f1.c"}).ok());
  EXPECT_EQ(clean_checkpoints(), 0u);
}
