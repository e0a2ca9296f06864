// The plan format: sections, `- spec-<name>: <description>` items and every rule on them.
#include <gtest/gtest.h>

#include <loopr/markdown/artifacts.hpp>

#include "support/artifact_checks.hpp"

using namespace loopr;
using namespace loopr::markdown;
using namespace loopr::testing;

namespace {

// A valid plan; tests break one thing at a time.
const std::string kPlan = R"(# Add a --shout flag to greet

## Overview
`greet` prints a greeting. Users want it *louder*.

## Phases
1. Parse the flag.
2. Test it.

## Success Criteria
- `./greet --shout Ada` prints `HELLO, ADA!`.

## Specs to Create
- spec-shout-flag: Parse `--shout` and **upper-case** the greeting.
- spec-shout-tests: Test the flag.
)";

}  // namespace

TEST(PlanArtifactTest, ValidPlanGivesEveryFieldWithItsLine) {
  auto plan = check_plan(kPlan);
  ASSERT_TRUE(plan.valid()) << dump(plan.problems);
  EXPECT_TRUE(section_is(plan.doc.title, "Add a --shout flag to greet", 1));
  EXPECT_TRUE(
      section_is(plan.doc.overview, "`greet` prints a greeting. Users want it *louder*.", 3));
  EXPECT_TRUE(section_is(plan.doc.phases, "1. Parse the flag.\n2. Test it.", 6));
  EXPECT_TRUE(
      section_is(plan.doc.success_criteria, "- `./greet --shout Ada` prints `HELLO, ADA!`.", 10));
  EXPECT_EQ(plan.doc.specs_to_create.line, 13);
  ASSERT_EQ(plan.doc.specs.size(), 2u);
  const SpecItem& first = plan.doc.specs[0];
  EXPECT_EQ(first.name, "shout-flag");  // without the `spec-` prefix
  EXPECT_EQ(first.description, "Parse --shout and upper-case the greeting.");  // markers gone
  EXPECT_EQ(first.index, 1);
  EXPECT_EQ(first.line, 14);
  EXPECT_EQ(plan.doc.specs[1].name, "shout-tests");
  EXPECT_EQ(plan.doc.specs[1].index, 2);
  EXPECT_EQ(plan.doc.specs[1].line, 15);
}

TEST(PlanArtifactTest, MissingSectionNamesItAndWhatToWrite) {
  auto plan = check_plan(replace_once(kPlan, "## Success Criteria\n", "## Checks\n"));
  const Problem* p = find_problem(plan.problems, Rule::missing_section, 1);
  ASSERT_NE(p, nullptr) << dump(plan.problems);
  EXPECT_NE(p->message.find("`## Success Criteria`"), std::string::npos) << p->message;
  EXPECT_NE(p->message.find("bullet list of observable checks"), std::string::npos) << p->message;
  EXPECT_EQ(plan.problems.size(), 1u) << dump(plan.problems);
}

TEST(PlanArtifactTest, EveryMissingSectionIsReportedAtOnce) {
  auto plan = check_plan("# Title\n\nJust prose.\n");
  EXPECT_EQ(count_rule(plan.problems, Rule::missing_section), 4) << dump(plan.problems);
  for (const char* name : {"Overview", "Phases", "Success Criteria", "Specs to Create"}) {
    bool named = false;
    for (const auto& p : plan.problems) named |= p.message.find(name) != std::string::npos;
    EXPECT_TRUE(named) << name;
  }
}

TEST(PlanArtifactTest, EmptySectionIsReportedAtItsHeading) {
  auto plan = check_plan(replace_once(kPlan, "`greet` prints a greeting. Users want it *louder*.\n",
                                      "<!-- to do -->\n\n---\n"));
  expect_problem(plan.problems, Rule::empty_section, 3, "under it, write two to five sentences");
}

TEST(PlanArtifactTest, SectionAtTheWrongLevelSaysToUseTwoHashes) {
  auto plan = check_plan(replace_once(kPlan, "## Phases", "### Phases"));
  expect_problem(plan.problems, Rule::misplaced_section, 6, "write it as `## Phases`");
}

TEST(PlanArtifactTest, RepeatedSectionPointsToTheFirst) {
  auto plan = check_plan(kPlan + "\n## Overview\nAgain.\n");
  expect_problem(plan.problems, Rule::duplicate_section, 17, "first at line 3");
}

TEST(PlanArtifactTest, MissingOrEmptyTitle) {
  auto untitled = check_plan(replace_once(kPlan, "# Add a --shout flag to greet\n", ""));
  EXPECT_NE(find_problem(untitled.problems, Rule::missing_title, 1), nullptr)
      << dump(untitled.problems);
  auto empty = check_plan(replace_once(kPlan, "# Add a --shout flag to greet\n", "\n#\n"));
  EXPECT_NE(find_problem(empty.problems, Rule::missing_title, 2), nullptr) << dump(empty.problems);
}

TEST(PlanArtifactTest, SpecsSectionWithoutListItemsHasNoItems) {
  auto plan = check_plan(
      replace_once(kPlan,
                   "- spec-shout-flag: Parse `--shout` and **upper-case** the greeting.\n"
                   "- spec-shout-tests: Test the flag.\n",
                   "spec-shout-flag: written as a paragraph\n"));
  ASSERT_NO_FATAL_FAILURE(
      expect_problem(plan.problems, Rule::no_items, 13, "`- spec-<name>: <description>`"));
  EXPECT_TRUE(plan.doc.specs.empty());
}

TEST(PlanArtifactTest, ItemWithoutSpecPrefixIsMalformedWithASuggestedName) {
  auto plan = check_plan(
      replace_once(kPlan, "- spec-shout-tests: Test the flag.", "- Tests: cover the flag"));
  const Problem* p = find_problem(plan.problems, Rule::malformed_item, 15);
  ASSERT_NE(p, nullptr) << dump(plan.problems);
  EXPECT_NE(p->message.find("`Tests: cover the flag` is not a spec item"), std::string::npos);
  EXPECT_NE(p->message.find("`- spec-tests: …`"), std::string::npos) << p->message;
  ASSERT_EQ(plan.doc.specs.size(), 1u);  // the good item is still read
}

TEST(PlanArtifactTest, SpecNameOutsideTheAlphabetIsABadName) {
  for (const char* name : {"Shout_Tests", "shout tests", "shöut", ""}) {
    auto plan =
        check_plan(replace_once(kPlan, "spec-shout-tests:", std::string("spec-") + name + ":"));
    const Problem* p = find_problem(plan.problems, Rule::bad_name, 15);
    ASSERT_NE(p, nullptr) << name << "\n" << dump(plan.problems);
    EXPECT_NE(p->message.find("lower-case letters, digits and dashes"), std::string::npos);
  }
  auto plan = check_plan(replace_once(kPlan, "spec-shout-tests:", "spec-Shout_Tests:"));
  EXPECT_NE(plan.problems[0].message.find("write `- spec-shout-tests: …`"), std::string::npos)
      << plan.problems[0].message;
  // The exact alphabet is allowed, digits and dashes included.
  EXPECT_TRUE(check_plan(replace_once(kPlan, "spec-shout-tests:", "spec-3-x-9:")).valid());
}

TEST(PlanArtifactTest, ItemWithoutColonOrDescription) {
  auto no_colon =
      check_plan(replace_once(kPlan, "spec-shout-tests: Test", "spec-shout-tests Test"));
  EXPECT_NE(find_problem(no_colon.problems, Rule::malformed_item, 15), nullptr)
      << dump(no_colon.problems);
  auto no_desc =
      check_plan(replace_once(kPlan, "spec-shout-tests: Test the flag.", "spec-shout-tests:"));
  expect_problem(no_desc.problems, Rule::missing_description, 15,
                 "`- spec-shout-tests: <one sentence");
}

TEST(PlanArtifactTest, EmptyItemsAndItemsThatAreNotTextAreMalformed) {
  auto empty = check_plan(replace_once(kPlan, "- spec-shout-tests: Test the flag.", "-"));
  ASSERT_NO_FATAL_FAILURE(
      expect_problem(empty.problems, Rule::malformed_item, 15, "empty list item"));
  // A heading inside an item is not a spec line, even when its words look like one.
  auto heading = check_plan(
      replace_once(kPlan, "- spec-shout-tests: Test the flag.", "- ## spec-shout-tests: Test"));
  ASSERT_NO_FATAL_FAILURE(
      expect_problem(heading.problems, Rule::malformed_item, 15, "write it as plain text"));
  EXPECT_EQ(heading.doc.specs.size(), 1u);
}

TEST(PlanArtifactTest, DuplicateSpecNamesPointToTheFirst) {
  auto plan = check_plan(replace_once(kPlan, "spec-shout-tests:", "spec-shout-flag:"));
  ASSERT_NO_FATAL_FAILURE(
      expect_problem(plan.problems, Rule::duplicate_name, 15, "first at line 14"));
  EXPECT_EQ(plan.doc.specs.size(), 1u);
}

TEST(PlanArtifactTest, MoreSpecsThanTheLimitIsReportedOnceAtTheFirstExtraItem) {
  std::string items;
  for (int i = 1; i <= 5; ++i)
    items += "- spec-s" + std::to_string(i) + ": Part " + std::to_string(i) + ".\n";
  std::string text =
      replace_once(kPlan,
                   "- spec-shout-flag: Parse `--shout` and **upper-case** the greeting.\n"
                   "- spec-shout-tests: Test the flag.\n",
                   items);
  ArtifactsConfig limits;
  limits.max_items = 4;
  auto plan = check_plan(text, limits);
  ASSERT_NO_FATAL_FAILURE(expect_problem(plan.problems, Rule::too_many_items, 18, "at most 4"));
  EXPECT_EQ(plan.problems.size(), 1u);
  limits.max_items = 5;
  EXPECT_TRUE(check_plan(text, limits).valid());
  EXPECT_EQ(ArtifactsConfig{}.max_items, 12);  // the default the issue names
}

TEST(PlanArtifactTest, AllProblemsAreReportedSortedByLine) {
  std::string text = "# T\n\n## Overview\n\n## Specs to Create\n- spec-A: x\n- nope\n- spec-b:\n";
  auto plan = check_plan(text);
  ASSERT_GE(plan.problems.size(), 6u) << dump(plan.problems);
  EXPECT_NE(find_problem(plan.problems, Rule::empty_section, 3), nullptr);
  EXPECT_NE(find_problem(plan.problems, Rule::bad_name, 6), nullptr);
  EXPECT_NE(find_problem(plan.problems, Rule::malformed_item, 7), nullptr);
  EXPECT_NE(find_problem(plan.problems, Rule::missing_description, 8), nullptr);
  EXPECT_EQ(count_rule(plan.problems, Rule::missing_section), 2);
  for (std::size_t i = 1; i < plan.problems.size(); ++i)
    EXPECT_LE(plan.problems[i - 1].line, plan.problems[i].line);
}

TEST(PlanArtifactTest, NestedContentOfAnItemBecomesItsDetails) {
  auto plan = check_plan(replace_once(kPlan, "- spec-shout-tests: Test the flag.\n",
                                      "- spec-shout-tests: Test the flag.\n"
                                      "  - with a name\n"
                                      "  - without one\n"));
  ASSERT_TRUE(plan.valid()) << dump(plan.problems);
  ASSERT_EQ(plan.doc.specs.size(), 2u);
  EXPECT_EQ(plan.doc.specs[1].description, "Test the flag.");
  EXPECT_EQ(plan.doc.specs[1].details, "- with a name\n- without one");
}

TEST(PlanArtifactTest, ReadPlanGivesTheDocOrAnErrorListingEveryProblem) {
  auto good = read_plan(kPlan, "p.md");
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->specs.size(), 2u);
  auto bad = read_plan("# T\n", "p.md");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(std::count(bad.error().message.begin(), bad.error().message.end(), '\n'), 3)
      << bad.error().message;  // four `p.md:1: missing section …` lines
  EXPECT_EQ(bad.error().message.rfind("p.md:1: missing section `## Overview`", 0), 0u);
}
