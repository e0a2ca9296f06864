#include <gtest/gtest.h>

#include <algorithm>

#include <loopr/core/ids.hpp>
#include <loopr/core/repo_paths.hpp>

using namespace loopr;

TEST(IdsTest, PlanIdsAreThreeDigitsAtLeast) {
  EXPECT_EQ(plan_id(1), "001");
  EXPECT_EQ(plan_id(42), "042");
  EXPECT_EQ(plan_id(1234), "1234");
}

TEST(IdsTest, ChildIdsDependOnlyOnParentAndIndex) {
  EXPECT_EQ(child_id("001", LoopType::spec, 2), "001-002");
  EXPECT_EQ(child_id("001-002", LoopType::phase, 3), "001-002-003");
  EXPECT_EQ(child_id("001-002-003", LoopType::code, 1), "code-001-002-003");
  EXPECT_EQ(child_id("001", LoopType::spec, 2), child_id("001", LoopType::spec, 2));
}

TEST(IdsTest, ShapesAndParents) {
  EXPECT_EQ(type_of_id("001"), LoopType::plan);
  EXPECT_EQ(type_of_id("001-002"), LoopType::spec);
  EXPECT_EQ(type_of_id("001-002-003"), LoopType::phase);
  EXPECT_EQ(type_of_id("code-001-002-003"), LoopType::code);
  EXPECT_FALSE(type_of_id("code-001").has_value());
  EXPECT_FALSE(type_of_id("01").has_value());
  EXPECT_FALSE(type_of_id("abc").has_value());
  EXPECT_FALSE(type_of_id("001-002-003-004").has_value());
  EXPECT_FALSE(type_of_id("../etc").has_value());
  EXPECT_EQ(parent_of_id("001"), "");
  EXPECT_EQ(parent_of_id("001-002"), "001");
  EXPECT_EQ(parent_of_id("001-002-003"), "001-002");
  EXPECT_EQ(parent_of_id("code-001-002-003"), "001-002-003");
  EXPECT_EQ(root_plan_id("code-001-002-003"), "001");
  EXPECT_EQ(root_plan_id("007-001"), "007");
}

TEST(IdsTest, SlugsAndArtifactPaths) {
  EXPECT_EQ(slugify("Add OAuth login!"), "add-oauth-login");
  EXPECT_EQ(slugify("  --  "), "untitled");
  EXPECT_EQ(slugify("Ünïcode ok"), "n-code-ok");
  EXPECT_LE(slugify(std::string(100, 'a')).size(), 40u);
  EXPECT_EQ(artifact_path(LoopType::plan, "001", "Add OAuth"),
            ".loopr/plans/001-add-oauth.plan.md");
  EXPECT_EQ(artifact_path(LoopType::spec, "001-001", "db-schema"),
            ".loopr/specs/001-001-db-schema.spec.md");
  EXPECT_EQ(artifact_path(LoopType::phase, "001-001-001", "Migrations"),
            ".loopr/phases/001-001-001-migrations.phase.md");
  EXPECT_EQ(artifact_path(LoopType::code, "code-001-001-001", "x"), "");
}

TEST(IdsTest, DescendantsIncludeTheCodeLoopOfAPhaseButNotThePrefixOfAnotherPlan) {
  EXPECT_TRUE(is_descendant("001-002", "001"));
  EXPECT_TRUE(is_descendant("001-002-003", "001"));
  EXPECT_TRUE(is_descendant("code-001-002-003", "001"));
  EXPECT_TRUE(is_descendant("code-001-002-003", "001-002-003"));
  EXPECT_FALSE(is_descendant("001", "001"));
  EXPECT_FALSE(is_descendant("0010-001", "001"));
  EXPECT_FALSE(is_descendant("001-003", "001-002"));
}

TEST(IdsTest, TreeOrderPutsEachCodeLoopRightAfterItsPhase) {
  std::vector<std::string> ids = {"code-001-001-001", "001-002",     "001",
                                  "001-001-002",      "001-001-001", "001-001"};
  std::sort(ids.begin(), ids.end(), [](const std::string& a, const std::string& b) {
    return tree_sort_key(a) < tree_sort_key(b);
  });
  EXPECT_EQ(ids, (std::vector<std::string>{"001", "001-001", "001-001-001", "code-001-001-001",
                                           "001-001-002", "001-002"}));
}

TEST(IdsTest, AnIntegrationFixLoopIsACodeLoopWhoseParentIsThePlanAndSortsLast) {
  EXPECT_EQ(fix_loop_id("001", 1), "fix-001-001");
  EXPECT_EQ(fix_loop_id("1234", 12), "fix-1234-012");
  EXPECT_TRUE(is_fix_loop_id("fix-001-001"));
  EXPECT_FALSE(is_fix_loop_id("code-001-002-003"));
  EXPECT_FALSE(is_fix_loop_id("fix-001"));
  EXPECT_FALSE(is_fix_loop_id("fix-001-002-003"));
  EXPECT_EQ(type_of_id("fix-001-001"), LoopType::code);
  EXPECT_EQ(type_of_id("fix-001-0x1"), std::nullopt);
  EXPECT_EQ(parent_of_id("fix-001-002"), "001");
  EXPECT_EQ(root_plan_id("fix-001-002"), "001");
  EXPECT_TRUE(is_descendant("fix-001-002", "001"));
  EXPECT_FALSE(is_descendant("fix-001-002", "001-002"));
  EXPECT_FALSE(is_descendant("fix-0010-002", "001"));
  EXPECT_GT(tree_sort_key("fix-001-001"), tree_sort_key("code-001-999-999"));
  EXPECT_GT(tree_sort_key("fix-001-001"), tree_sort_key("001-999-999"));
  EXPECT_LT(tree_sort_key("fix-001-001"), tree_sort_key("fix-001-002"));
}

TEST(IdsTest, APhaseThatIteratesAgainGetsAFreshCodeLoopIdForItsNextGeneration) {
  // Issue 15: the same id for the next generation meant its code loop was never spawned.
  EXPECT_EQ(child_id("001-002-003", LoopType::code, 2), "code-001-002-003-002");
  EXPECT_EQ(type_of_id("code-001-002-003-002"), LoopType::code);
  EXPECT_EQ(parent_of_id("code-001-002-003-002"), "001-002-003");
  EXPECT_EQ(root_plan_id("code-001-002-003-002"), "001");
  EXPECT_TRUE(is_descendant("code-001-002-003-002", "001-002-003"));
  EXPECT_TRUE(is_descendant("code-001-002-003-002", "001-002"));
  EXPECT_TRUE(is_descendant("code-001-002-003-002", "001"));
  EXPECT_FALSE(is_descendant("code-001-002-003-002", "001-002-004"));
  EXPECT_FALSE(is_descendant("code-001-002-003-002", "code-001-002-003"));
  EXPECT_FALSE(type_of_id("code-001-002-003-004-005").has_value());
  EXPECT_FALSE(type_of_id("code-001-002-003-0x4").has_value());
  // Right after the first generation's code loop, before the next phase.
  EXPECT_GT(tree_sort_key("code-001-002-003-002"), tree_sort_key("code-001-002-003"));
  EXPECT_LT(tree_sort_key("code-001-002-003-002"), tree_sort_key("001-002-004"));
}

TEST(IdsTest, MalformedLaterGenerationCodeIdsAreNotIds) {
  EXPECT_FALSE(type_of_id("code-001-002-003-001").has_value());  // generation 1 has no suffix
  EXPECT_FALSE(type_of_id("code-001-002-003-99999999999999999999").has_value());
  EXPECT_FALSE(parent_of_id("code-001-002-003-99999999999999999999").has_value());
}
