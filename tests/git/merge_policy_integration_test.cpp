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
