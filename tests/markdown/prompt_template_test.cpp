// `{{name}}` templates: every variable renders, `\{{` escapes, unknown variables are refused at
// load time with their line, values are never expanded twice.
#include <gtest/gtest.h>

#include <loopr/markdown/prompt_template.hpp>

using namespace loopr;
using namespace loopr::markdown;

namespace {

// A distinct value per variable, to see each one land in its place.
PromptValues all_values() {
  PromptValues values;
  for (std::string_view name : prompt_variable_names())
    values[std::string(name)] = "<" + std::string(name) + " value>";
  return values;
}

}  // namespace

TEST(PromptTemplateTest, EveryVariableRenders) {
  std::string text;
  for (std::string_view name : prompt_variable_names())
    text += std::string(name) + "={{" + std::string(name) + "}}\n";
  auto t = PromptTemplate::parse(text, "all.md");
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto out = t->render(all_values());
  ASSERT_TRUE(out.ok()) << out.error().message;
  std::string expected;
  for (std::string_view name : prompt_variable_names())
    expected += std::string(name) + "=<" + std::string(name) + " value>\n";
  EXPECT_EQ(*out, expected);
  EXPECT_EQ(t->variables().size(), prompt_variable_names().size());
}

TEST(PromptTemplateTest, TheVariablesTheDesignNames) {
  for (const char* name : {"task", "input", "progress", "git-status", "git-diff", "git-log",
                           "artifact-path", "parent-id", "loop-id", "input-path", "loop-type",
                           "iteration", "max-iterations", "completion-signal"})
    EXPECT_TRUE(is_prompt_variable(name)) << name;
  EXPECT_FALSE(is_prompt_variable("Task"));
  EXPECT_FALSE(is_prompt_variable(""));
}

TEST(PromptTemplateTest, SpacesInsideBracesAndRepeatedUse) {
  auto t = PromptTemplate::parse("{{ task }} and {{task}} in {{loop-id}}", "t.md");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(*t->render({{"task", "X"}, {"loop-id", "001"}}), "X and X in 001");
  EXPECT_EQ(t->variables(), (std::vector<std::string>{"task", "loop-id"}));
}

TEST(PromptTemplateTest, BackslashEscapesLiteralBraces) {
  auto t = PromptTemplate::parse("Write \\{{task}} literally, then {{task}}; a } or { alone stays.",
                                 "t.md");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(*t->render({{"task", "T"}}), "Write {{task}} literally, then T; a } or { alone stays.");
  EXPECT_EQ(t->variables(), std::vector<std::string>{"task"});
}

TEST(PromptTemplateTest, UnknownVariableIsAnErrorNamingItAndItsLine) {
  auto t = PromptTemplate::parse(
      "# Title\n\nline three {{task}}\n{{git_diff}} and {{frobnicate}}\n", "plan.md");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::invalid_argument);
  const std::string& m = t.error().message;
  EXPECT_NE(m.find("plan.md:4: unknown variable `{{git_diff}}`"), std::string::npos) << m;
  EXPECT_NE(m.find("plan.md:4: unknown variable `{{frobnicate}}`"), std::string::npos) << m;
  EXPECT_NE(m.find("known: task, input"), std::string::npos) << m;
}

TEST(PromptTemplateTest, UnclosedBracesAreAnError) {
  auto t = PromptTemplate::parse("ok\n{{task\n}}\n", "code.md");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("code.md:2: `{{` is not closed"), std::string::npos)
      << t.error().message;
}

TEST(PromptTemplateTest, ValuesAreInsertedVerbatimNeverExpandedAgain) {
  auto t = PromptTemplate::parse("[{{input}}]", "t.md");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t->render({{"input", "{{task}} \\{{ $x"}}), "[{{task}} \\{{ $x]");
}

TEST(PromptTemplateTest, RenderingWithoutAValueNamesTheVariable) {
  auto t = PromptTemplate::parse("a\n{{git-diff}}", "code.md");
  ASSERT_TRUE(t.ok());
  auto out = t->render({{"task", "x"}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message, "code.md:2: no value for `{{git-diff}}`");
}

TEST(PromptTemplateTest, TextWithoutVariablesIsUnchanged) {
  const std::string text = "# Heading\n\n```\ncode }} {\n```\n\xE2\x80\x94 done\n";
  auto t = PromptTemplate::parse(text, "t.md");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t->render({}), text);
}
