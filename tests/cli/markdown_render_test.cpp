// The terminal rendering of plans: plain without a terminal, styled on one, wrapped and indented.
#include "cli/markdown_render.hpp"

#include <gtest/gtest.h>

using namespace loopr::cli;

namespace {

const char* kPlan = R"(# Add OAuth

## Overview
Let users sign in with **GitHub**, keeping `sessions` as they are.

## Specs to Create
- spec-db-schema: tables for tokens
  - nested detail
- spec-login-flow: the redirect dance

```cpp
int main() {}
```

> a quote
)";

}  // namespace

TEST(MarkdownRenderTest, PlainKeepsStructureMarkers) {
  std::string out = render_markdown(kPlan, Style{false}, 80);
  EXPECT_EQ(out,
            "# Add OAuth\n"
            "\n"
            "## Overview\n"
            "\n"
            "Let users sign in with **GitHub**, keeping `sessions` as they are.\n"
            "\n"
            "## Specs to Create\n"
            "\n"
            "- spec-db-schema: tables for tokens\n"
            "  - nested detail\n"
            "- spec-login-flow: the redirect dance\n"
            "\n"
            "    int main() {}\n"
            "\n"
            "> a quote\n");
}

TEST(MarkdownRenderTest, ColourBoldsHeadingsAndDimsCode) {
  std::string out = render_markdown(kPlan, Style{true}, 80);
  EXPECT_NE(out.find("\x1b[1;4mAdd OAuth\x1b[0m"), std::string::npos) << out;
  EXPECT_NE(out.find("\x1b[1mOverview\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("\x1b[1mGitHub\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("\x1b[2msessions\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("    \x1b[2mint main() {}\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("• spec-db-schema"), std::string::npos);
  EXPECT_EQ(out.find("## "), std::string::npos);
}

TEST(MarkdownRenderTest, WrapsParagraphsAndListItemsWithHangingIndent) {
  std::string out =
      render_markdown("1. one two three four five six seven\n2. x\n", Style{false}, 20);
  EXPECT_EQ(out,
            "1. one two three\n"
            "   four five six\n"
            "   seven\n"
            "2. x\n");
}

TEST(MarkdownRenderTest, TablesAlignAndTaskListsShowTheirState) {
  std::string out = render_markdown(
      "| a | bb |\n|---|---|\n| ccc | d |\n\n- [x] done\n- [ ] todo\n", Style{false}, 80);
  EXPECT_NE(out.find("a    bb\n---  --\nccc  d\n"), std::string::npos) << out;
  EXPECT_NE(out.find("- [x] done\n- [ ] todo\n"), std::string::npos) << out;
}

TEST(MarkdownRenderTest, WrapTextKeepsLongWordsAndHardBreaks) {
  EXPECT_EQ(wrap_text("abcdefghijklmnop qr", "", "", 10), "abcdefghijklmnop\nqr\n");
  EXPECT_EQ(wrap_text("a\nb", "> ", "> ", 10), "> a\n> b\n");
  EXPECT_EQ(wrap_text("", "- ", "  ", 10), "-\n");
}

TEST(MarkdownRenderTest, EscapesDoNotCountTowardsTheWidth) {
  EXPECT_EQ(visible_width("\x1b[1mabc\x1b[0m"), 3u);
  EXPECT_EQ(visible_width("├─ ü"), 4u);
  EXPECT_EQ(truncate_visible("\x1b[1mabcdef\x1b[0m", 3), "\x1b[1mabc\x1b[0m");
  EXPECT_EQ(pad_visible("\x1b[1mab\x1b[0m", 4), "\x1b[1mab\x1b[0m  ");
}
