// A template rendered in two parts for prompt caching (PromptTemplate::render_split): the
// sections that use only stable variables (the system block every iteration and loop of a type
// shares), and the rest; the same text, only reordered; a value never starts a section.
#include <gtest/gtest.h>

#include <algorithm>

#include <loopr/markdown/prompt_library.hpp>
#include <loopr/markdown/prompt_template.hpp>

using namespace loopr::markdown;

namespace {

const std::vector<std::string> kStable = {"completion-signal", "validation-command", "max-items",
                                          "loop-type"};

std::string sorted(std::string s) {
  std::sort(s.begin(), s.end());
  return s;
}

}  // namespace

TEST(PromptSplitTest, FixedSectionsGoFirstAndTheRestKeepsItsOrder) {
  auto t = PromptTemplate::parse(
      "# Code loop {{loop-id}} (iteration {{iteration}})\n\nIntro.\n\n"
      "## Your Phase\n\n{{input}}\n\n"
      "## How to Work\n\nRun `{{validation-command}}`.\n\n"
      "## Feedback\n\n{{progress}}\n\n"
      "## When You Are Done\n\nEnd with {{completion-signal}}.\n",
      "t.md");
  ASSERT_TRUE(t.ok()) << t.error().message;
  PromptValues v = {{"loop-id", "code-001"},
                    {"iteration", "3"},
                    {"input", "## Task\nfrom the phase, with a heading of its own\n"},
                    {"validation-command", "make test"},
                    {"progress", "none"},
                    {"completion-signal", "<done>"}};
  auto split = t->render_split(v, kStable);
  ASSERT_TRUE(split.ok()) << split.error().message;
  EXPECT_EQ(split->fixed,
            "## How to Work\n\nRun `make test`.\n\n## When You Are Done\n\nEnd with <done>.\n");
  EXPECT_EQ(
      split->rest,
      "# Code loop code-001 (iteration 3)\n\nIntro.\n\n## Your Phase\n\n## Task\nfrom the phase, "
      "with a heading of its own\n\n\n## Feedback\n\nnone\n\n");
  auto whole = t->render(v);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(sorted(split->fixed + split->rest), sorted(*whole)) << "the same text, reordered";
}

TEST(PromptSplitTest, TheShippedCodeTemplateKeepsItsPhaseAndIterationOutOfTheFixedPart) {
  auto loaded = load_prompt("code", {});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  PromptValues v;
  for (const auto& name : loaded->prompt.variables()) v[name] = "VALUE-OF-" + name;
  auto a = loaded->prompt.render_split(v, kStable);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_GT(a->fixed.size(), 1000u) << "the instructions are in the system block";
  for (const char* changing : {"VALUE-OF-loop-id", "VALUE-OF-iteration", "VALUE-OF-input",
                               "VALUE-OF-git-diff", "VALUE-OF-progress"}) {
    EXPECT_EQ(a->fixed.find(changing), std::string::npos) << changing;
    EXPECT_NE(a->rest.find(changing), std::string::npos) << changing;
  }
  // Another loop, another iteration: the system block is byte-identical.
  PromptValues w = v;
  w["loop-id"] = "code-009-001-002";
  w["iteration"] = "7";
  w["git-diff"] = "diff --git a/x b/x";
  EXPECT_EQ(loaded->prompt.render_split(w, kStable)->fixed, a->fixed);
}

TEST(PromptSplitTest, HeadingsInAFencedExampleDoNotStartSections) {
  auto t = PromptTemplate::parse(
      "# Spec loop {{loop-id}}\n\n## The Format\n\n```markdown\n# Example\n\n## "
      "Overview\nx\n```\n\n"
      "## Your Spec\n\n{{task}}\n",
      "t.md");
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto split = t->render_split({{"loop-id", "001-001"}, {"task", "the task"}}, kStable);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->fixed, "## The Format\n\n```markdown\n# Example\n\n## Overview\nx\n```\n\n");
  EXPECT_EQ(split->rest, "# Spec loop 001-001\n\n## Your Spec\n\nthe task\n");
}
