// Branch names: the shapes DESIGN.md promises, and that git can hold them all at once.
#include <gtest/gtest.h>

#include <loopr/core/ids.hpp>
#include <loopr/git/branches.hpp>

using namespace loopr::git;

TEST(BranchNamesTest, ShapesOfIntegrationLoopAndArchiveBranches) {
  EXPECT_EQ(integration_branch("001"), "loopr/001");
  EXPECT_EQ(loop_branch("001", "001-002"), "loopr/001-loops/001-002");
  EXPECT_EQ(loop_branch("001", "code-001-002-003"), "loopr/001-loops/code-001-002-003");
  EXPECT_EQ(archive_branch("001-002"), "loopr/archive/001-002");
}

// Git keeps `refs/heads/a` as a file, so no branch may be named `a/...` while `a` exists.
TEST(BranchNamesTest, NoNameIsAFolderOfAnother) {
  std::string plan = loopr::plan_id(1);
  std::vector<std::string> names = {
      integration_branch(plan), loop_branch(plan, plan),
      loop_branch(plan, loopr::child_id(plan, loopr::LoopType::spec, 2)), archive_branch(plan),
      integration_branch(loopr::plan_id(2))};
  for (const auto& a : names) {
    for (const auto& b : names) {
      if (&a == &b) continue;
      EXPECT_NE(b.rfind(a + "/", 0), 0u) << b << " would live under " << a;
    }
  }
}
