// The shipped templates (compiled in from prompts/) and the `.loopr/prompts/<type>.md` override.
#include <gtest/gtest.h>

#include <loopr/markdown/artifacts.hpp>
#include <loopr/markdown/prompt_library.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::markdown;
using loopr::testing::read_file;
using loopr::testing::TempDir;
using loopr::testing::write_file;

namespace {

PromptValues all_values() {
  PromptValues values;
  for (std::string_view name : prompt_variable_names())
    values[std::string(name)] = "<" + std::string(name) + ">";
  values["artifact-path"] = ".loopr/plans/001-x.plan.md";
  values["progress"] = "FEEDBACK-FROM-ITERATION-1";
  return values;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(PromptLibraryTest, ShippedTemplatesAreTheFilesInPrompts) {
  for (std::string_view type : prompt_types()) {
    std::string file = std::string(LOOPR_SOURCE_DIR) + "/prompts/" + std::string(type) + ".md";
    EXPECT_EQ(shipped_prompt(type), read_file(file))
        << "rebuild: the embedded copy of " << file << " is stale";
  }
  EXPECT_TRUE(shipped_prompt("nope").empty());
}

TEST(PromptLibraryTest, EveryShippedTemplateLoadsAndRendersWithTheRequiredParts) {
  TempDir repo;  // no overrides in it
  for (std::string_view type : prompt_types()) {
    auto loaded = load_prompt_for_repo(type, repo.path());
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_FALSE(loaded->overridden);
    EXPECT_EQ(loaded->origin, "shipped:" + std::string(type) + ".md");
    auto out = loaded->prompt.render(all_values());
    ASSERT_TRUE(out.ok()) << out.error().message;
    const std::string& text = *out;
    SCOPED_TRACE(std::string(type));
    // The earlier feedback, under its heading.
    auto heading = text.find("\n## Previous Iteration Feedback\n");
    ASSERT_NE(heading, std::string::npos);
    EXPECT_NE(text.find("FEEDBACK-FROM-ITERATION-1", heading), std::string::npos);
    EXPECT_NE(text.find("**Your one job:**"), std::string::npos);
    EXPECT_FALSE(contains(text, "{{"));  // nothing left unrendered
    if (type == "review") {
      // The optional reviewer (loops.review) reads the phase and the diff; it has no tools.
      EXPECT_TRUE(contains(text, "no tools"));
      continue;
    }
    if (type == "judge") {
      EXPECT_TRUE(contains(text, "<artifact>"));
      // The verdict protocol the engine parses: a first line `PASS` or `FAIL: reason`.
      EXPECT_TRUE(contains(text, "`PASS`"));
      EXPECT_TRUE(contains(text, "`FAIL: "));
      continue;
    }
    // The tools the model has, by their fixed names.
    for (const char* tool :
         {"read_file", "write_file", "edit_file", "list_dir", "search", "run_command"})
      EXPECT_TRUE(contains(text, std::string("`") + tool + "`")) << tool;
    EXPECT_TRUE(contains(text, "<completion-signal>"));
    if (type == "code" || type == "integration-fix") {
      if (type == "code") {
        EXPECT_TRUE(contains(text, "<input>"));  // the phase document
      }
      // The fix loop's task names the loops merged (the failing output is its feedback).
      if (type == "integration-fix") {
        EXPECT_TRUE(contains(text, "<task>"));
      }
      EXPECT_TRUE(contains(text, "`<validation-command>`"));
      EXPECT_TRUE(contains(text, "<git-diff>"));
    } else {
      // The artifact path in backticks, and the exact format with an example.
      EXPECT_TRUE(contains(text, "`.loopr/plans/001-x.plan.md`"));
      EXPECT_TRUE(contains(text, "```markdown\n# "));
    }
  }
}

TEST(PromptLibraryTest, TheExamplesInsideTheShippedPromptsAreValidArtifacts) {
  // A prompt that shows the model an invalid example would teach it to fail.
  const std::pair<std::string_view, ArtifactKind> kinds[] = {
      {"plan", ArtifactKind::plan}, {"spec", ArtifactKind::spec}, {"phase", ArtifactKind::phase}};
  for (auto [type, kind] : kinds) {
    std::string text(shipped_prompt(type));
    auto start = text.find("```markdown\n");
    ASSERT_NE(start, std::string::npos) << type;
    start += 12;
    auto end = text.find("\n```\n", start);
    ASSERT_NE(end, std::string::npos) << type;
    auto problems = validate_artifact(kind, text.substr(start, end - start + 1));
    EXPECT_TRUE(problems.empty()) << type << "\n" << format_problems("example", problems);
  }
}

TEST(PromptLibraryTest, RepositoryOverrideWinsForItsTypeOnly) {
  TempDir repo;
  write_file(repo / ".loopr/prompts/code.md",
             "Custom for {{loop-id}}\n## Previous Iteration Feedback\n{{progress}}\n");
  auto code = load_prompt_for_repo("code", repo.path());
  ASSERT_TRUE(code.ok()) << code.error().message;
  EXPECT_TRUE(code->overridden);
  EXPECT_EQ(code->origin, (repo / ".loopr/prompts/code.md").string());
  EXPECT_EQ(*code->prompt.render({{"loop-id", "code-001-001-001"}, {"progress", "none"}}),
            "Custom for code-001-001-001\n## Previous Iteration Feedback\nnone\n");
  auto plan = load_prompt_for_repo("plan", repo.path());
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->overridden);
}

TEST(PromptLibraryTest, FirstOverrideDirectoryWins) {
  TempDir a, b;
  write_file(b / "spec.md", "from b");
  write_file(a / "spec.md", "from a");
  auto loaded = load_prompt("spec", {a.path(), b.path()});
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(*loaded->prompt.render({}), "from a");
  auto second = load_prompt("phase", {a.path(), b.path()});
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->overridden);
}

TEST(PromptLibraryTest, OverrideWithAnUnknownVariableFailsAtLoadNamingFileAndLine) {
  TempDir repo;
  write_file(repo / ".loopr/prompts/plan.md", "# Plan\n\n{{task}}\n{{requets}}\n");
  auto loaded = load_prompt_for_repo("plan", repo.path());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code, ErrorCode::invalid_argument);
  EXPECT_NE(loaded.error().message.find((repo / ".loopr/prompts/plan.md").string() +
                                        ":4: unknown variable `{{requets}}`"),
            std::string::npos)
      << loaded.error().message;
}

TEST(PromptLibraryTest, UnknownTypeIsRefused) {
  auto loaded = load_prompt("retrospective", {});  // "review" is a type now (loops.review)
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code, ErrorCode::invalid_argument);
}
