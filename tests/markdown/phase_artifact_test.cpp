// The phase format: four required sections, each non-empty.
#include <gtest/gtest.h>

#include <loopr/markdown/artifacts.hpp>

#include "support/artifact_checks.hpp"

using namespace loopr;
using namespace loopr::markdown;
using namespace loopr::testing;

namespace {

const std::string kPhase = R"(# Parse the flag

## Parent Spec
`.loopr/specs/001-001-shout-flag.spec.md`

## Task
Make `greet` accept `--shout`.

## Specific Work
- Set `shout=0` before the loop.
- `--shout` sets `shout=1`.

## Success Criteria
- `make test` passes.
)";

}  // namespace

TEST(PhaseArtifactTest, ValidPhaseGivesEveryFieldWithItsLine) {
  auto phase = check_phase(kPhase);
  ASSERT_TRUE(phase.valid()) << dump(phase.problems);
  EXPECT_EQ(phase.doc.title.text, "Parse the flag");
  EXPECT_TRUE(section_is(phase.doc.parent_spec, ".loopr/specs/001-001-shout-flag.spec.md", 3));
  EXPECT_TRUE(section_is(phase.doc.task, "Make `greet` accept `--shout`.", 6));
  EXPECT_TRUE(section_is(phase.doc.specific_work,
                         "- Set `shout=0` before the loop.\n- `--shout` sets `shout=1`.", 9));
  EXPECT_TRUE(section_is(phase.doc.success_criteria, "- `make test` passes.", 13));
}

TEST(PhaseArtifactTest, EachSectionMissingOrEmptyIsReported) {
  const std::pair<const char*, int> sections[] = {
      {"## Parent Spec", 3}, {"## Task", 6}, {"## Specific Work", 9}, {"## Success Criteria", 13}};
  for (auto [heading, line] : sections) {
    std::string missing = kPhase;
    missing.replace(missing.find(heading), std::string(heading).size(), "## Other");
    auto m = check_phase(missing);
    const Problem* p = find_problem(m.problems, Rule::missing_section, 1);
    ASSERT_NE(p, nullptr) << heading << "\n" << dump(m.problems);
    EXPECT_NE(p->message.find(std::string("`") + heading + "`"), std::string::npos);

    // Empty: the heading directly followed by the next heading (or the end of the file).
    std::string empty = kPhase;
    std::size_t start = empty.find(heading) + std::string(heading).size() + 1;
    std::size_t end = empty.find("\n## ", start);
    empty.erase(start, end == std::string::npos ? std::string::npos : end + 1 - start);
    auto e = check_phase(empty);
    EXPECT_NE(find_problem(e.problems, Rule::empty_section, line), nullptr) << heading << "\n"
                                                                            << dump(e.problems);
    EXPECT_EQ(e.problems.size(), 1u) << dump(e.problems);
  }
}

TEST(PhaseArtifactTest, FilesLinesUnderSpecificWorkAreTheFilesThePhaseOwns) {
  auto phase = check_phase(R"(# Update the greeting test

## Parent Spec
`.loopr/specs/001-001-shout-flag.spec.md`

## Task
Update the test for the new greeting.

## Specific Work
- Change the expected line in the test.
- Files: `tests/t_greet.sh`, greet
  - files: docs/greet.md

Files: `Makefile`

```
- Files: tests/run.sh
```

> - Files: tests/other.sh

## Success Criteria
- `make test` passes.
- Files: not/here.txt
)");
  ASSERT_TRUE(phase.valid()) << dump(phase.problems);
  EXPECT_EQ(phase.doc.files,
            (std::vector<std::string>{"tests/t_greet.sh", "greet", "docs/greet.md", "Makefile"}))
      << "code blocks, quotes and other sections do not count";
  EXPECT_TRUE(check_phase(kPhase).doc.files.empty());
}
