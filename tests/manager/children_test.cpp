// Which children an artifact asks for: ids from the parent's id and the item's index, stable
// when asked again, and never reused by a parent's next generation.
#include <gtest/gtest.h>

#include "manager/tree_fixture.hpp"
#include "manager/tree_rules.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {

Config config_with_code_check(const std::string& check) {
  Config c;
  c.loops[LoopType::code].validation = check;
  c.loops[LoopType::code].max_iterations = 7;
  c.loops[LoopType::spec].max_iterations = 4;
  return c;
}

}  // namespace

TEST(ChildrenTest, APlanGivesOneSpecLoopPerItemWithItsIndexAndArtifact) {
  Config config = config_with_code_check("make test");
  Loop plan = finished("001");
  plan.output_artifacts = {".loopr/plans/001-add-a-shout-flag.plan.md"};
  auto kids = children_from_artifact(plan, kPlanText, config);
  ASSERT_TRUE(kids.ok()) << kids.error().message;
  ASSERT_EQ(kids->size(), 2u);
  const Loop& first = (*kids)[0];
  EXPECT_EQ(first.id, "001-001");
  EXPECT_EQ(first.type, LoopType::spec);
  EXPECT_EQ(first.parent_id, "001");
  EXPECT_EQ(first.plan_id, "001");
  EXPECT_EQ(first.index, 1);
  EXPECT_EQ(first.status, LoopStatus::pending);
  EXPECT_EQ(first.input_artifact, ".loopr/plans/001-add-a-shout-flag.plan.md");
  EXPECT_EQ(first.output_artifacts,
            std::vector<std::string>{".loopr/specs/001-001-shout-flag.spec.md"});
  EXPECT_EQ(first.task, "spec-shout-flag: Parse --shout.");
  EXPECT_EQ(first.max_iterations, 4);
  EXPECT_EQ((*kids)[1].id, "001-002");
}

TEST(ChildrenTest, ASpecGivesPhasesWithTheirFilesInTheTask) {
  Loop spec = finished("001-001");
  auto kids = children_from_artifact(spec, kSpecText, Config{});
  ASSERT_TRUE(kids.ok()) << kids.error().message;
  ASSERT_EQ(kids->size(), 2u);
  EXPECT_EQ((*kids)[0].id, "001-001-001");
  EXPECT_EQ((*kids)[0].type, LoopType::phase);
  EXPECT_EQ((*kids)[0].task, "Parse: Read the argument.\nFiles: greet.sh, lib/args.sh");
  EXPECT_EQ((*kids)[1].id, "001-001-002");
  EXPECT_EQ((*kids)[1].index, 2);
}

TEST(ChildrenTest, APhaseGivesOneCodeLoopWithTheValidationCommand) {
  Loop phase = finished("001-001-002");
  auto kids = children_from_artifact(phase, kPhaseText, config_with_code_check("ctest"));
  ASSERT_TRUE(kids.ok()) << kids.error().message;
  ASSERT_EQ(kids->size(), 1u);
  const Loop& code = kids->front();
  EXPECT_EQ(code.id, "code-001-001-002");
  EXPECT_EQ(code.type, LoopType::code);
  EXPECT_EQ(code.parent_id, "001-001-002");
  EXPECT_EQ(code.validation_command, "ctest");
  EXPECT_EQ(code.max_iterations, 7);
  EXPECT_TRUE(code.output_artifacts.empty());
  EXPECT_EQ(code.task, "Phase: parse the flag");
}

TEST(ChildrenTest, AskingAgainGivesTheSameIds) {
  Loop plan = finished("001");
  auto once = children_from_artifact(plan, kPlanText, Config{});
  auto twice = children_from_artifact(plan, kPlanText, Config{});
  ASSERT_TRUE(once.ok() && twice.ok());
  ASSERT_EQ(once->size(), twice->size());
  for (std::size_t i = 0; i < once->size(); ++i) EXPECT_EQ((*once)[i].id, (*twice)[i].id);
}

TEST(ChildrenTest, ANextGenerationContinuesAfterEveryIndexUsed) {
  Loop plan = finished("001", 2);
  plan.tree.children_base = 2;  // the first generation was 001-001 and 001-002
  auto kids = children_from_artifact(plan, kPlanText, Config{});
  ASSERT_TRUE(kids.ok());
  ASSERT_EQ(kids->size(), 2u);
  EXPECT_EQ((*kids)[0].id, "001-003");
  EXPECT_EQ((*kids)[0].index, 3);
  EXPECT_EQ((*kids)[1].id, "001-004");
  // Across two generations of a spec the code loops follow their phases.
  Loop spec = finished("001-003", 2);
  spec.tree.children_base = 2;
  auto phases = children_from_artifact(spec, kSpecText, Config{});
  ASSERT_TRUE(phases.ok());
  EXPECT_EQ((*phases)[0].id, "001-003-003");
  Loop phase = finished((*phases)[0].id);
  auto code = children_from_artifact(phase, kPhaseText, Config{});
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(code->front().id, "code-001-003-003");
}

TEST(ChildrenTest, AnArtifactThatDoesNotParseIsAnError) {
  Loop plan = finished("001");
  auto kids = children_from_artifact(plan, "# Just a title\n", Config{});
  EXPECT_FALSE(kids.ok());
  Loop none = finished("001-001");
  none.output_artifacts.clear();
  EXPECT_EQ(children_from_artifact(none, kSpecText, Config{}).error().code,
            ErrorCode::invalid_argument);
}

TEST(ChildrenTest, APlanLoopTakesItsBaseBranchAndLimitsFromTheConfig) {
  Config config;
  config.base_branch = "trunk";
  config.loops[LoopType::plan].max_iterations = 3;
  Loop plan = make_plan_loop("004", "Add OAuth login", config);
  EXPECT_EQ(plan.id, "004");
  EXPECT_EQ(plan.plan_id, "004");
  EXPECT_EQ(plan.type, LoopType::plan);
  EXPECT_EQ(plan.status, LoopStatus::pending);
  EXPECT_EQ(plan.tree.base_branch, "trunk");
  EXPECT_EQ(plan.max_iterations, 3);
  EXPECT_EQ(plan.prompt_template, "plan");
  EXPECT_EQ(plan.output_artifacts,
            std::vector<std::string>{".loopr/plans/004-add-oauth-login.plan.md"});
}
