// The merge policy over a real repository's committed diff (git/path_changes.cpp,
// core/merge_policy.hpp): what it reads comes from git objects (modes, apparent blob sizes,
// link targets), never from a work tree; a loop's refused work is not merged.
#include <gtest/gtest.h>

#include <loopr/core/merge_policy.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/loop_worktrees.hpp>
#include <loopr/git/repository.hpp>

#include "git/git_test_repo.hpp"

using namespace loopr;
using namespace loopr::testing;
using R = HeldPath::Role;

namespace {

std::optional<R> role_of(const std::vector<HeldPath>& held, const std::string& path) {
  for (const auto& h : held)
    if (h.path == path) return h.role;
  return std::nullopt;
}

// Moves the loose objects of `shas` out of the object folder (so no handle can read them from
// disk) and puts them back when it goes.
class HiddenObjects {
 public:
  HiddenObjects(const std::filesystem::path& root, const std::vector<std::string>& shas)
      : objects_(root / ".git" / "objects"), aside_(root.parent_path() / "aside") {
    std::filesystem::create_directories(aside_);
    for (const std::string& sha : shas) {
      std::filesystem::path file = objects_ / sha.substr(0, 2) / sha.substr(2);
      EXPECT_TRUE(std::filesystem::exists(file)) << sha << " is not a loose object";
      std::filesystem::rename(file, aside_ / sha);
      hidden_.push_back(sha);
    }
  }
  ~HiddenObjects() {
    for (const std::string& sha : hidden_)
      std::filesystem::rename(aside_ / sha, objects_ / sha.substr(0, 2) / sha.substr(2));
  }

 private:
  std::filesystem::path objects_;
  std::filesystem::path aside_;
  std::vector<std::string> hidden_;
};

// `trunk` moves on by `n` commits after `work` forked from it; returns the commits strictly
// between its new tip and the fork (what a merge-base walk from the tip goes through).
std::vector<std::string> move_trunk_on(const TestRepo& repo, int n) {
  std::vector<std::string> between;
  for (int i = 0; i < n; ++i) {
    repo.write("landed/" + std::to_string(i) + ".txt", "landed " + std::to_string(i) + "\n");
    between.push_back(repo.commit_all("landed " + std::to_string(i)));
  }
  between.pop_back();  // the tip itself is read to resolve the branch
  return between;
}

}  // namespace

// proves S3.1 S3.2 S3.4 S3.5 S3.7
TEST(MergePolicyIntegrationTest, TheCommittedTreeDiffIsReadFromGitObjects) {
  TestRepo repo;
  run_git(repo.root(), "checkout -q -b work");
  const auto root = repo.root();
  std::filesystem::create_directories(root / "docs");
  std::filesystem::create_symlink("/etc/passwd", root / "docs/abs-link");
  std::filesystem::create_symlink("../README.md", root / "docs/in-link");
  std::filesystem::create_directory_symlink("docs", root / ".claude");
  repo.write(".gitignore", "*.log\n");
  repo.write(".githooks/pre-commit", "#!/bin/sh\nevil\n");
  repo.write("tools/hooks/pre-push", "#!/bin/sh\nevil\n");
  repo.write("big.bin", std::string(300 * 1024, 'x'));
  repo.write("bad\nname", "x");
  repo.commit_all("hostile");
  // The work tree no longer has any of it: only the commit counts.
  run_git(root, "checkout -q trunk");
  run_git(root, "config core.hooksPath tools/hooks");
  MergeRules rules;
  rules.max_file_size = 256 * 1024;
  ASSERT_OK_AND_ASSIGN(auto held, repo.open().merge_findings("trunk", "work", rules));
  EXPECT_EQ(role_of(held, "docs/abs-link"), R::refused);
  EXPECT_EQ(role_of(held, "docs/in-link"), R::symlink);
  EXPECT_EQ(role_of(held, ".claude"), R::symlink);
  EXPECT_EQ(role_of(held, ".gitignore"), R::loopr);
  EXPECT_EQ(role_of(held, ".githooks/pre-commit"), R::hooks);
  EXPECT_EQ(role_of(held, "tools/hooks/pre-push"), R::hooks);
  EXPECT_EQ(role_of(held, "big.bin"), R::refused);
  EXPECT_EQ(role_of(held, "bad\nname"), R::refused);
  EXPECT_EQ(role_of(held, "README.md"), std::nullopt);
  // What is refused outright, and only that, for a loop's work.
  rules.tree = false;
  ASSERT_OK_AND_ASSIGN(auto refused, repo.open().merge_findings("trunk", "work", rules));
  EXPECT_EQ(refused.size(), 3u) << describe_held(refused);
  EXPECT_TRUE(any_refused(refused));
}

// proves S3.1
TEST(MergePolicyIntegrationTest, ALoopsRefusedWorkIsNotMergedIntoTheIntegrationBranch) {
  TestRepo repo;
  git::LoopWorktrees wt(repo.root());
  Loop l;
  l.id = "code-001-001-001";
  l.plan_id = "001";
  l.type = LoopType::code;
  ASSERT_OK_AND_ASSIGN(auto made, wt.prepare(l, "trunk"));
  l.worktree = made.worktree;
  l.branch = made.branch;
  const std::filesystem::path w = made.worktree;
  std::filesystem::create_symlink("../../../../../.ssh/id_rsa", w / "key");
  repo.commit_all("a link out", w);
  ASSERT_OK_AND_ASSIGN(const std::string tip_before, wt.integration_tip("001"));
  ASSERT_OK_AND_ASSIGN(auto out,
                       wt.merge_into_integration(l, false, "trunk", "merge", true, MergeRules{}));
  ASSERT_EQ(out.refused.size(), 1u);
  EXPECT_EQ(out.refused[0].path, "key");
  ASSERT_OK_AND_ASSIGN(const std::string tip_after, wt.integration_tip("001"));
  EXPECT_EQ(tip_after, tip_before);
}

// The merge policy's read of what a loop's branch commits walks the integration branch back to
// the fork: every merge made since. That walk is made on the repository's kept object handle
// (git::detail::kept_merge_base), so the next merge's walk reads memory, not each of those
// commits from disk again (issue 47 item 2: 93 % of the daemon's loose-object reads). Shown by
// taking the walked commits off the disk: the second read still finds the same.
TEST(MergePolicyIntegrationTest, TheForkWalkReadsTheHistoryItWalkedBeforeFromMemory) {
  TestRepo repo;
  run_git(repo.root(), "checkout -q -b work");
  repo.write(".githooks/pre-commit", "#!/bin/sh\nevil\n");
  repo.write("src/work.txt", "the loop's work\n");
  repo.commit_all("the loop's work");
  run_git(repo.root(), "checkout -q trunk");
  std::vector<std::string> walked = move_trunk_on(repo, 20);
  MergeRules rules;
  rules.tree = false;
  ASSERT_OK_AND_ASSIGN(auto first, repo.open().merge_findings("trunk", "work", rules));
  ASSERT_OK_AND_ASSIGN(auto paths, repo.open().changed_since_fork("trunk", "work"));
  EXPECT_EQ(paths, (std::vector<std::string>{".githooks/pre-commit", "src/work.txt"}));
  {
    HiddenObjects gone(repo.root(), walked);
    ASSERT_OK_AND_ASSIGN(auto again, repo.open().merge_findings("trunk", "work", rules));
    EXPECT_EQ(describe_held(again), describe_held(first));
    ASSERT_OK_AND_ASSIGN(auto paths_again, repo.open().changed_since_fork("trunk", "work"));
    EXPECT_EQ(paths_again, paths);
  }
  EXPECT_TRUE(fsck_clean(repo.root()));
}

// The same for a loop's worktree: its work since the branch it started from is measured from
// their merge base, walked on the main repository's kept handle (the worktree shares its
// objects), so a prompt's or the protection check's read does not re-read the history either.
TEST(MergePolicyIntegrationTest, ALinkedWorktreesStartIsWalkedOnTheKeptHandleToo) {
  TestRepo repo;
  ASSERT_OK_AND_ASSIGN(git::Repository r, git::Repository::open(repo.root()));
  ASSERT_OK(r.create_branch("work", "trunk"));
  ASSERT_OK_AND_ASSIGN(git::Worktree wt, r.add_worktree("code-1", "work"));
  write_file(wt.path() / "src/work.txt", "the loop's work\n");
  repo.commit_all("the loop's work", wt.path());
  std::vector<std::string> walked = move_trunk_on(repo, 20);
  auto listed = [&]() -> std::vector<std::string> {
    auto changes = wt.path_changes_since("trunk");
    EXPECT_TRUE(changes.ok()) << (changes.ok() ? "" : changes.error().message);
    std::vector<std::string> out;
    if (changes.ok())
      for (const PathChange& c : *changes) out.push_back(c.path);
    return out;
  };
  std::vector<std::string> first = listed();
  EXPECT_EQ(first, (std::vector<std::string>{"src/work.txt"}));
  {
    HiddenObjects gone(repo.root(), walked);
    EXPECT_EQ(listed(), first);
  }
  EXPECT_TRUE(fsck_clean(repo.root()));
}
