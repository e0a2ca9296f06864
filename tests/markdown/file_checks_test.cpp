// The rules about the file as bytes: its size and its encoding.
#include "markdown/file_checks.hpp"

#include <gtest/gtest.h>

#include <loopr/markdown/artifacts.hpp>

#include "support/artifact_checks.hpp"

using namespace loopr;
using namespace loopr::markdown;
using namespace loopr::testing;

namespace {

const std::string kPhase =
    "# P\n\n## Parent Spec\ns\n\n## Task\nt\n\n## Specific Work\n- w\n\n## Success Criteria\n- c\n";

}  // namespace

TEST(FileChecksTest, OverTheSizeLimitIsReportedAlongsideTheOtherProblems) {
  ArtifactsConfig limits;
  limits.max_bytes = 1024;
  std::string text = kPhase + std::string(1024, 'x') + "\n";
  text.replace(text.find("## Task"), 7, "## Job");
  auto phase = check_phase(text, limits);
  ASSERT_NO_FATAL_FAILURE(
      expect_problem(phase.problems, Rule::too_large, 1,
                     std::to_string(text.size()) + " bytes, more than the limit of 1024"));
  EXPECT_NE(find_problem(phase.problems, Rule::missing_section, 1), nullptr);  // all at once
  limits.max_bytes = text.size();
  EXPECT_EQ(count_rule(check_phase(text, limits).problems, Rule::too_large), 0);
  EXPECT_EQ(ArtifactsConfig{}.max_bytes, 1024u * 1024u);  // the default the issue names
}

TEST(FileChecksTest, InvalidUtf8IsReportedPerLineWithByteAndColumn) {
  std::string text = kPhase;
  text.replace(text.find("- w"), 3, "- caf\xE9");
  text.replace(text.rfind("- c"), 3, "- \xC0\xAF and \xFF");
  auto phase = check_phase(text);
  ASSERT_NO_FATAL_FAILURE(
      expect_problem(phase.problems, Rule::not_utf8, 10, "byte 0xE9 at column 6"));
  ASSERT_NO_FATAL_FAILURE(
      expect_problem(phase.problems, Rule::not_utf8, 13, "byte 0xC0 at column 3"));
  EXPECT_EQ(count_rule(phase.problems, Rule::not_utf8), 2);  // one per line
  // The rest of the file is still read (the bad bytes become U+FFFD).
  EXPECT_EQ(phase.doc.specific_work.line, 9);
}

TEST(FileChecksTest, Utf8ValidatorFollowsTheStandard) {
  EXPECT_TRUE(is_utf8(""));
  EXPECT_TRUE(is_utf8("plain ascii"));
  EXPECT_TRUE(is_utf8("caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"));
  EXPECT_FALSE(is_utf8("\xC3"));              // truncated
  EXPECT_FALSE(is_utf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(is_utf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(is_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(is_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_utf8("\x80"));              // lone continuation
  EXPECT_FALSE(is_utf8("\xF5\x80\x80\x80"));
}

TEST(FileChecksTest, ManyBadLinesAreCapped) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "\xFF\n";
  std::vector<Problem> problems;
  check_utf8(text, problems);
  EXPECT_EQ(problems.size(), 11u) << dump(problems);
  EXPECT_NE(problems.back().message.find("more lines"), std::string::npos);
}
