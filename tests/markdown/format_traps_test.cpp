// What real models write: the parser must be tolerant of it (CRLF, trailing #s, setext
// headings, other bullets, nested lists, __bold__, extra sections, tables) and not fooled by
// headings or items inside code blocks and quotes.
#include <gtest/gtest.h>

#include <loopr/markdown/artifacts.hpp>

#include "support/artifact_checks.hpp"

using namespace loopr;
using namespace loopr::markdown;
using namespace loopr::testing;

namespace {

const std::string kPlan = R"(# Add a --shout flag to greet

## Overview
Users want it louder.

## Phases
1. Parse. 2. Test.

## Success Criteria
- `make test` passes.

## Specs to Create
- spec-shout-flag: Parse the flag.
- spec-shout-tests: Test the flag.
)";

const std::string kSpec = R"(# Shout flag

## Parent Plan
plan.md

## Overview
Adds the flag.

## Phases
1. **Parse the flag**
   Read it.
2. **Shout the greeting**
   Upper-case it.
)";

std::string crlf(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\n' ? std::string("\r\n") : std::string(1, c);
  return out;
}

std::vector<std::string> spec_names(const PlanDoc& doc) {
  std::vector<std::string> names;
  for (const auto& s : doc.specs) names.push_back(s.name);
  return names;
}

const std::vector<std::string> kTwoSpecs = {"shout-flag", "shout-tests"};

}  // namespace

TEST(FormatTrapsTest, CrlfLineEndingsParseTheSameWithTheSameLines) {
  auto unix_plan = check_plan(kPlan);
  auto dos_plan = check_plan(crlf(kPlan));
  ASSERT_TRUE(dos_plan.valid()) << dump(dos_plan.problems);
  EXPECT_EQ(spec_names(dos_plan.doc), kTwoSpecs);
  EXPECT_EQ(dos_plan.doc.specs[1].line, unix_plan.doc.specs[1].line);
  EXPECT_EQ(dos_plan.doc.overview.text, "Users want it louder.");  // no stray \r
  auto dos_spec = check_spec(crlf(kSpec));
  ASSERT_TRUE(dos_spec.valid()) << dump(dos_spec.problems);
  EXPECT_EQ(dos_spec.doc.phases[1].line, 12);
  // A lone \r also ends a line (as cmark counts), so lines stay aligned with the AST.
  std::string mac = kPlan;
  for (char& c : mac)
    if (c == '\n') c = '\r';
  auto mac_plan = check_plan(mac);
  ASSERT_TRUE(mac_plan.valid()) << dump(mac_plan.problems);
  EXPECT_EQ(mac_plan.doc.specs[0].line, 13);
}

TEST(FormatTrapsTest, CrlfProblemsKeepTheirLines) {
  auto plan = check_plan(crlf(replace_once(kPlan, "## Phases", "### Phases")));
  EXPECT_NE(find_problem(plan.problems, Rule::misplaced_section, 6), nullptr)
      << dump(plan.problems);
}

TEST(FormatTrapsTest, TrailingHashesAndSpacesInHeadings) {
  std::string text =
      replace_once(replace_once(kPlan, "## Overview\n", "## Overview ##   \n"),
                   "# Add a --shout flag to greet\n", "# Add a --shout flag to greet #\n");
  text = replace_once(text, "## Specs to Create\n", "##   Specs to Create   ####\n");
  auto plan = check_plan(text);
  ASSERT_TRUE(plan.valid()) << dump(plan.problems);
  EXPECT_EQ(plan.doc.title.text, "Add a --shout flag to greet");
  EXPECT_EQ(spec_names(plan.doc), kTwoSpecs);
}

TEST(FormatTrapsTest, SetextHeadings) {
  std::string text =
      replace_once(kPlan, "# Add a --shout flag to greet\n", "Add a --shout flag to greet\n===\n");
  text = replace_once(text, "## Specs to Create\n", "Specs to Create\n---------------\n");
  auto plan = check_plan(text);
  ASSERT_TRUE(plan.valid()) << dump(plan.problems);
  EXPECT_EQ(plan.doc.title.text, "Add a --shout flag to greet");
  EXPECT_EQ(plan.doc.specs_to_create.line, 13);
  EXPECT_EQ(spec_names(plan.doc), kTwoSpecs);
}

TEST(FormatTrapsTest, HeadingCaseColonsAndNumberingAreTolerated) {
  std::string text = replace_once(kPlan, "## Success Criteria", "## 3. success criteria:");
  text = replace_once(text, "## Specs to Create", "## **Specs To Create**");
  auto plan = check_plan(text);
  EXPECT_TRUE(plan.valid()) << dump(plan.problems);
}

TEST(FormatTrapsTest, StarAndPlusBulletsAndTaskItems) {
  for (const char* bullet : {"* ", "+ ", "- [ ] "}) {
    std::string text = replace_once(
        replace_once(kPlan, "- spec-shout-flag", std::string(bullet) + "spec-shout-flag"),
        "- spec-shout-tests", std::string(bullet) + "spec-shout-tests");
    auto plan = check_plan(text);
    ASSERT_TRUE(plan.valid()) << bullet << "\n" << dump(plan.problems);
    EXPECT_EQ(spec_names(plan.doc), kTwoSpecs) << bullet;
  }
  // Mixed bullets make two lists; both count, in order.
  auto mixed = check_plan(replace_once(kPlan, "- spec-shout-tests", "* spec-shout-tests"));
  EXPECT_EQ(spec_names(mixed.doc), kTwoSpecs);
  EXPECT_EQ(mixed.doc.specs[1].index, 2);
}

TEST(FormatTrapsTest, NestedListsBelongToTheirItem) {
  std::string text =
      replace_once(kPlan, "- spec-shout-flag: Parse the flag.\n",
                   "- spec-shout-flag: Parse the flag.\n"
                   "  - spec-not-a-child: a nested line is detail, not another spec\n"
                   "    1. deeper\n");
  auto plan = check_plan(text);
  ASSERT_TRUE(plan.valid()) << dump(plan.problems);
  EXPECT_EQ(spec_names(plan.doc), kTwoSpecs);
  EXPECT_EQ(plan.doc.specs[0].details,
            "- spec-not-a-child: a nested line is detail, not another spec\n  - deeper");

  // Phases with nested sub-steps keep them as description lines.
  auto spec =
      check_spec(replace_once(kSpec, "   Read it.\n", "   Read it.\n   1. first\n   2. second\n"));
  ASSERT_TRUE(spec.valid()) << dump(spec.problems);
  EXPECT_EQ(spec.doc.phases.size(), 2u);
  EXPECT_EQ(spec.doc.phases[0].description, "Read it.\n- first\n- second");
}

TEST(FormatTrapsTest, UnderscoreBoldAndEmphasisInNamesAndDescriptions) {
  auto spec = check_spec(replace_once(kSpec, "**Parse the flag**", "__Parse *the* flag__"));
  ASSERT_TRUE(spec.valid()) << dump(spec.problems);
  EXPECT_EQ(spec.doc.phases[0].name, "Parse the flag");
  auto plan = check_plan(replace_once(kPlan, "- spec-shout-flag: Parse the flag.",
                                      "- **spec-shout-flag**: Parse __the__ `--shout` _flag_."));
  ASSERT_TRUE(plan.valid()) << dump(plan.problems);
  EXPECT_EQ(plan.doc.specs[0].name, "shout-flag");
  EXPECT_EQ(plan.doc.specs[0].description, "Parse the --shout flag.");
  auto code_name = check_plan(replace_once(kPlan, "- spec-shout-flag:", "- `spec-shout-flag`:"));
  EXPECT_EQ(spec_names(code_name.doc), kTwoSpecs) << dump(code_name.problems);
}

TEST(FormatTrapsTest, ExtraSectionsAndTablesAreIgnored) {
  std::string text = kPlan + "\n## Risks\n| risk | mitigation |\n|---|---|\n| spec-x: y | none |\n";
  text = replace_once(
      text, "## Specs to Create\n",
      "## Specs to Create\n\n| spec | owner |\n|------|-------|\n| spec-table: no | me |\n\n");
  auto plan = check_plan(text);
  ASSERT_TRUE(plan.valid()) << dump(plan.problems);
  EXPECT_EQ(spec_names(plan.doc), kTwoSpecs);
  EXPECT_NE(plan.doc.specs_to_create.text.find("| spec-table: no | me |"), std::string::npos);
}

TEST(FormatTrapsTest, HeadingInsideAFencedCodeBlockIsNotASection) {
  std::string text = replace_once(kPlan, "## Success Criteria\n- `make test` passes.\n",
                                  "```markdown\n## Success Criteria\n- `make test` passes.\n```\n");
  auto plan = check_plan(text);
  EXPECT_NE(find_problem(plan.problems, Rule::missing_section, 1), nullptr) << dump(plan.problems);
  // Nor a tilde fence, nor an indented code block, nor a heading in a quote.
  for (const char* wrap : {"~~~\n%s~~~\n", "    %s", "> %s"}) {
    std::string block = wrap;
    block.replace(block.find("%s"), 2, "## Success Criteria\n");
    auto p = check_plan(replace_once(kPlan, "## Success Criteria\n", "Text.\n\n" + block + "\n"));
    EXPECT_NE(find_problem(p.problems, Rule::missing_section, 1), nullptr)
        << wrap << dump(p.problems);
  }
}

TEST(FormatTrapsTest, SpecItemsInsideCodeBlocksOrQuotesAreNotSpecs) {
  std::string text = replace_once(kPlan, "- spec-shout-tests: Test the flag.\n",
                                  "- spec-shout-tests: Test the flag.\n\n"
                                  "```\n- spec-in-code: no\n```\n\n"
                                  "> - spec-in-quote: no\n> spec-also-quoted: no\n\n"
                                  "    - spec-indented-code: no\n");
  auto plan = check_plan(text);
  ASSERT_TRUE(plan.valid()) << dump(plan.problems);
  EXPECT_EQ(spec_names(plan.doc), kTwoSpecs);

  // With only such lines, the section has no items at all.
  auto only = check_plan(replace_once(
      kPlan, "- spec-shout-flag: Parse the flag.\n- spec-shout-tests: Test the flag.\n",
      "```\n- spec-shout-flag: Parse the flag.\n```\n\n> - spec-shout-tests: Test.\n"));
  EXPECT_NE(find_problem(only.problems, Rule::no_items, 12), nullptr) << dump(only.problems);
  EXPECT_TRUE(only.doc.specs.empty());
}

TEST(FormatTrapsTest, PhaseItemsInCodeBlocksAreNotPhases) {
  auto spec =
      check_spec(replace_once(kSpec, "## Phases\n", "## Phases\n```\n1. **Fake**\n   no\n```\n"));
  ASSERT_TRUE(spec.valid()) << dump(spec.problems);
  EXPECT_EQ(spec.doc.phases.size(), 2u);
  EXPECT_EQ(spec.doc.phases[0].name, "Parse the flag");
}

TEST(FormatTrapsTest, ASubHeadingInsideASectionKeepsItsItems) {
  auto plan =
      check_plan(replace_once(kPlan, "- spec-shout-tests", "### Tests\n- spec-shout-tests"));
  ASSERT_TRUE(plan.valid()) << dump(plan.problems);
  EXPECT_EQ(spec_names(plan.doc), kTwoSpecs);
  // Level-3 headings belong to the section's text; only `#` and `##` end a section.
  auto sub = check_plan(
      replace_once(kPlan, "Users want it louder.\n", "### Why\nUsers want it louder.\n"));
  ASSERT_TRUE(sub.valid()) << dump(sub.problems);
  EXPECT_EQ(sub.doc.overview.text, "### Why\nUsers want it louder.");
}

TEST(FormatTrapsTest, ByteOrderMarkIsIgnored) {
  auto plan = check_plan("\xEF\xBB\xBF" + kPlan);
  ASSERT_TRUE(plan.valid()) << dump(plan.problems);
  EXPECT_EQ(plan.doc.title.text, "Add a --shout flag to greet");
}
