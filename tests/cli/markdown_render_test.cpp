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

TEST(MarkdownRenderTest, ControlsInThePlanAreShownNotObeyed) {
  // Raw controls and the character references cmark decodes into them (`&#x1b;` is an ESC,
  // `&#x9b;` a C1 CSI), in text, code, links and HTML.
  std::string plan =
      "# Plan \x1b]0;title\x07\n\nRun it\x1b[8m secretly\x1b[0m. &#x1b;[2J and &#x9b;31m.\n\n"
      "`\x1b]52;c;Zm9v\x07` [a](http://x/&#x1b;[2J)\n\n<div>\x1b[5F</div>\n\n"
      "```\n\x1b[2Kcode\n```\n";
  for (bool color : {false, true}) {
    std::string out = render_markdown(plan, Style{color}, 80);
    std::string stripped;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] == '\x1b' && out.compare(i, 2, "\x1b[") == 0) {
        std::size_t m = out.find('m', i);
        std::string seq = out.substr(i, m + 1 - i);
        // Only Style's own codes remain as escapes.
        EXPECT_TRUE(seq == "\x1b[1m" || seq == "\x1b[0m" || seq == "\x1b[2m" ||
                    seq == "\x1b[4m" || seq == "\x1b[1;4m" || seq == "\x1b[3m")
            << "unexpected escape " << seq.substr(1) << " in " << out;
        i = m;
        continue;
      }
      stripped += out[i];
    }
    EXPECT_EQ(stripped.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(stripped.find("\xc2\x9b"), std::string::npos) << out;
    EXPECT_EQ(stripped.find('\x07'), std::string::npos) << out;
    EXPECT_NE(stripped.find("^[]0;title^G"), std::string::npos) << out;
    EXPECT_NE(stripped.find("^[[8m secretly"), std::string::npos) << out;
    EXPECT_NE(stripped.find("^[[2J and <U+009B>31m"), std::string::npos) << out;
    EXPECT_NE(stripped.find("^[]52;c;Zm9v^G"), std::string::npos) << out;
    EXPECT_NE(stripped.find("^[[2Kcode"), std::string::npos) << out;
  }
}
