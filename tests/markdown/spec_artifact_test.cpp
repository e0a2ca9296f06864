// The spec format: sections and the numbered `## Phases` items (`1. **Name**`, description,
// `- Files: a, b`) with every rule on them.
#include <gtest/gtest.h>

#include <loopr/markdown/artifacts.hpp>

#include "support/artifact_checks.hpp"

using namespace loopr;
using namespace loopr::markdown;
using namespace loopr::testing;

namespace {

const std::string kSpec = R"(# Shout flag

## Parent Plan
`.loopr/plans/001-add-a-shout-flag-to-greet.plan.md`

## Overview
Adds `--shout` to `greet`.

## Phases
1. **Parse the flag**
   Recognise `--shout` anywhere in the arguments.
   - Files: greet, `tests/greet_test.sh`
2. **Shout the greeting**
   Upper-case the greeting.
)";

std::string numbered_phases(const std::vector<int>& numbers) {
  std::string text =
      "# S\n\n## Parent Plan\np\n\n## Overview\no\n\n## Phases\n";  // items from line 10
  int k = 0;
  for (int n : numbers) {
    ++k;
    text += std::to_string(n) + ". **Step " + std::to_string(k) + "**\n   Do part " +
            std::to_string(k) + ".\n";
  }
  return text;
}

}  // namespace

TEST(SpecArtifactTest, ValidSpecGivesEveryFieldWithItsLine) {
  auto spec = check_spec(kSpec);
  ASSERT_TRUE(spec.valid()) << dump(spec.problems);
  EXPECT_EQ(spec.doc.title.text, "Shout flag");
  EXPECT_TRUE(
      section_is(spec.doc.parent_plan, ".loopr/plans/001-add-a-shout-flag-to-greet.plan.md", 3));
  EXPECT_TRUE(section_is(spec.doc.overview, "Adds `--shout` to `greet`.", 6));
  EXPECT_EQ(spec.doc.phases_section.line, 9);
  ASSERT_EQ(spec.doc.phases.size(), 2u);
  const PhaseItem& first = spec.doc.phases[0];
  EXPECT_EQ(first.number, 1);
  EXPECT_EQ(first.name, "Parse the flag");
  EXPECT_EQ(first.description, "Recognise --shout anywhere in the arguments.");
  EXPECT_EQ(first.files, (std::vector<std::string>{"greet", "tests/greet_test.sh"}));
  EXPECT_EQ(first.line, 10);
  EXPECT_EQ(spec.doc.phases[1].number, 2);
  EXPECT_EQ(spec.doc.phases[1].name, "Shout the greeting");
  EXPECT_EQ(spec.doc.phases[1].description, "Upper-case the greeting.");
  EXPECT_TRUE(spec.doc.phases[1].files.empty());  // Files is optional
  EXPECT_EQ(spec.doc.phases[1].line, 13);
}

TEST(SpecArtifactTest, EachRequiredSectionIsChecked) {
  for (const char* section : {"## Parent Plan", "## Overview", "## Phases"}) {
    auto spec = check_spec(replace_once(kSpec, section, "## Something else"));
    const Problem* p = find_problem(spec.problems, Rule::missing_section, 1);
    ASSERT_NE(p, nullptr) << section << "\n" << dump(spec.problems);
    EXPECT_NE(p->message.find(std::string("`") + section + "`"), std::string::npos) << p->message;
  }
  auto empty =
      check_spec(replace_once(kSpec, "`.loopr/plans/001-add-a-shout-flag-to-greet.plan.md`\n", ""));
  EXPECT_NE(find_problem(empty.problems, Rule::empty_section, 3), nullptr) << dump(empty.problems);
}

TEST(SpecArtifactTest, PhaseNumbersMustBeOneToNInOrder) {
  EXPECT_TRUE(check_spec(numbered_phases({1, 2, 3})).valid());

  auto gap = check_spec(numbered_phases({1, 2, 4}));
  ASSERT_NO_FATAL_FAILURE(
      expect_problem(gap.problems, Rule::bad_number, 14, "phase number 4 should be 3"));

  // cmark renumbers `1. 1. 1.` as 1, 2, 3; the numbers as written are what is checked.
  auto repeated = check_spec(numbered_phases({1, 1, 1}));
  EXPECT_EQ(count_rule(repeated.problems, Rule::bad_number), 2) << dump(repeated.problems);
  EXPECT_NE(find_problem(repeated.problems, Rule::bad_number, 12), nullptr);

  auto late_start = check_spec(numbered_phases({2, 3}));
  EXPECT_NE(find_problem(late_start.problems, Rule::bad_number, 10), nullptr)
      << dump(late_start.problems);

  auto swapped = check_spec(numbered_phases({2, 1}));
  EXPECT_EQ(count_rule(swapped.problems, Rule::bad_number), 2) << dump(swapped.problems);
}

TEST(SpecArtifactTest, NumbersContinueAcrossListsInTheSection) {
  // A paragraph between items splits the list in two; the numbering still runs 1..n.
  std::string text =
      numbered_phases({1, 2}) + "\nA note between the phases.\n\n3. **Step 3**\n   Do it.\n";
  auto spec = check_spec(text);
  EXPECT_TRUE(spec.valid()) << dump(spec.problems);
  EXPECT_EQ(spec.doc.phases.size(), 3u);
  // A `)` delimiter is another list too, and is read the same way.
  auto paren = check_spec(replace_once(numbered_phases({1, 2}), "2. **", "2) **"));
  EXPECT_TRUE(paren.valid()) << dump(paren.problems);
}

TEST(SpecArtifactTest, ItemWithoutBoldNameIsMalformedWithASuggestion) {
  auto spec = check_spec(replace_once(kSpec, "2. **Shout the greeting**\n   Upper-case",
                                      "2. Shout the greeting: upper-case"));
  ASSERT_NO_FATAL_FAILURE(
      expect_problem(spec.problems, Rule::malformed_item, 13, "write `2. **Shout the greeting**`"));
  EXPECT_EQ(spec.doc.phases.size(), 1u);
}

TEST(SpecArtifactTest, ItemThatIsNotTextIsMalformed) {
  auto spec =
      check_spec(replace_once(kSpec, "2. **Shout the greeting**\n   Upper-case the greeting.\n",
                              "2. ```\n   **Shout**\n   ```\n"));
  expect_problem(spec.problems, Rule::malformed_item, 13, "phase 2 `**Shout**` is not text");
}

TEST(SpecArtifactTest, ItemWithoutDescriptionIsReported) {
  auto spec = check_spec(replace_once(kSpec, "   Upper-case the greeting.\n", ""));
  ASSERT_NO_FATAL_FAILURE(
      expect_problem(spec.problems, Rule::missing_description, 13, "`2. **Shout the greeting**`"));
  // A Files line alone is not a description either.
  auto files_only =
      check_spec(replace_once(kSpec, "   Upper-case the greeting.\n", "   - Files: greet\n"));
  EXPECT_NE(find_problem(files_only.problems, Rule::missing_description, 13), nullptr);
}

TEST(SpecArtifactTest, DuplicatePhaseNamesIgnoringCase) {
  auto spec = check_spec(replace_once(kSpec, "**Shout the greeting**", "**parse the FLAG**"));
  expect_problem(spec.problems, Rule::duplicate_name, 13, "first at line 10");
}

TEST(SpecArtifactTest, BulletedPhasesAreNoItemsWithAHintToNumberThem) {
  auto spec = check_spec(
      replace_once(replace_once(kSpec, "1. **Parse", "- **Parse"), "2. **Shout", "- **Shout"));
  expect_problem(spec.problems, Rule::no_items, 9, "the list at line 10 uses bullets");
}

TEST(SpecArtifactTest, MorePhasesThanTheLimit) {
  std::vector<int> numbers;
  for (int i = 1; i <= 13; ++i) numbers.push_back(i);
  auto spec = check_spec(numbered_phases(numbers));
  const Problem* p = find_problem(spec.problems, Rule::too_many_items, 10 + 2 * 12);
  ASSERT_NE(p, nullptr) << dump(spec.problems);
  EXPECT_EQ(spec.problems.size(), 1u);
  ArtifactsConfig limits;
  limits.max_items = 13;
  EXPECT_TRUE(check_spec(numbered_phases(numbers), limits).valid());
}

TEST(SpecArtifactTest, DescriptionVariantsModelsWrite) {
  // The description on the name's line after a colon or dash, several lines, a loose list, an
  // unbulleted Files line, and other sub-bullets kept as description lines.
  std::string text = numbered_phases({}) +
                     "1. **Parse the flag:** read `--shout`\n"
                     "   and remember it.\n"
                     "   Files: greet\n"
                     "\n"
                     "2. **Shout** — upper-case it\n"
                     "\n"
                     "   Then print it.\n"
                     "\n"
                     "   - keep `Hello`\n"
                     "   * **Files**: `greet`, README.md\n";
  auto spec = check_spec(text);
  ASSERT_TRUE(spec.valid()) << dump(spec.problems);
  ASSERT_EQ(spec.doc.phases.size(), 2u);
  EXPECT_EQ(spec.doc.phases[0].name, "Parse the flag");
  EXPECT_EQ(spec.doc.phases[0].description, "read --shout\nand remember it.");
  EXPECT_EQ(spec.doc.phases[0].files, std::vector<std::string>{"greet"});
  EXPECT_EQ(spec.doc.phases[1].name, "Shout");
  EXPECT_EQ(spec.doc.phases[1].description, "upper-case it\nThen print it.\n- keep Hello");
  EXPECT_EQ(spec.doc.phases[1].files, (std::vector<std::string>{"greet", "README.md"}));
}
