// The web UI's markdown renderer: model-written markdown becomes HTML that cannot run, load or
// navigate anything, while showing exactly what was written.
#include <gtest/gtest.h>

#include <loopr/markdown/html.hpp>

using loopr::markdown::is_safe_link;
using loopr::markdown::render_safe_html;

namespace {

bool has(const std::string& html, const std::string& part) {
  return html.find(part) != std::string::npos;
}

}  // namespace

TEST(SafeHtmlTest, RendersGfm) {
  std::string html = render_safe_html(
      "# Plan\n\nSome **bold** and `code`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n"
      "- ~~gone~~\n\n```cpp\nint x = 1 < 2;\n```\n");
  EXPECT_TRUE(has(html, "<h1>Plan</h1>")) << html;
  EXPECT_TRUE(has(html, "<strong>bold</strong>")) << html;
  EXPECT_TRUE(has(html, "<table>")) << html;
  EXPECT_TRUE(has(html, "<del>gone</del>")) << html;
  EXPECT_TRUE(has(html, "int x = 1 &lt; 2;")) << html;
}

TEST(SafeHtmlTest, RawHtmlIsShownAsTextNeverPassedThrough) {
  std::string html = render_safe_html(
      "Hello <script>alert(1)</script> and <img src=x onerror=alert(2)>.\n\n"
      "<div onclick=\"alert(3)\">\n<iframe src=\"https://evil.example\"></iframe>\n</div>\n");
  EXPECT_FALSE(has(html, "<script")) << html;
  EXPECT_FALSE(has(html, "<img")) << html;
  EXPECT_FALSE(has(html, "<iframe")) << html;
  EXPECT_FALSE(has(html, "<div")) << html;
  EXPECT_FALSE(has(html, "raw HTML omitted")) << html;
  // What the model wrote is visible, escaped.
  EXPECT_TRUE(has(html, "&lt;script&gt;alert(1)&lt;/script&gt;")) << html;
  EXPECT_TRUE(has(html, "&lt;img src=x onerror=alert(2)&gt;")) << html;
  EXPECT_TRUE(has(html, "<pre><code>&lt;div onclick=&quot;alert(3)&quot;&gt;")) << html;
}

TEST(SafeHtmlTest, LinksKeepOnlyWebAndMailTargets) {
  std::string html = render_safe_html(
      "[site](https://example.com/a?b=1&c=2) [mail](mailto:a@b.c) [js](javascript:alert(1)) "
      "[JS](  JaVaScRiPt:alert(2)) [data](data:text/html,<script>alert(3)</script>) "
      "[rel](../specs/x.md) <javascript:alert(4)> [vb](vbscript:msgbox)\n");
  EXPECT_TRUE(has(html, "<a href=\"https://example.com/a?b=1&amp;c=2\">site</a>")) << html;
  EXPECT_TRUE(has(html, "<a href=\"mailto:a@b.c\">mail</a>")) << html;
  EXPECT_FALSE(has(html, "href=\"javascript")) << html;
  EXPECT_FALSE(has(html, "href=\"JaVa")) << html;
  EXPECT_FALSE(has(html, "href=\"data")) << html;
  EXPECT_FALSE(has(html, "href=\"../")) << html;
  EXPECT_FALSE(has(html, "href=\"vbscript")) << html;
  EXPECT_FALSE(has(html, "href=\"\"")) << html;
  EXPECT_TRUE(has(html, "js (javascript:alert(1))")) << html;
  EXPECT_TRUE(has(html, "rel (../specs/x.md)")) << html;
  EXPECT_FALSE(has(html, "<script")) << html;
}

TEST(SafeHtmlTest, ImagesBecomeLinksSoNothingLoads) {
  std::string html = render_safe_html(
      "![chart](https://tracker.example/p.png) ![x](javascript:alert(1)) "
      "[![nested](https://a.example/i.png)](https://b.example)\n");
  EXPECT_FALSE(has(html, "<img")) << html;
  EXPECT_TRUE(has(html, "<a href=\"https://tracker.example/p.png\">image: chart</a>")) << html;
  EXPECT_FALSE(has(html, "href=\"javascript")) << html;
}

TEST(SafeHtmlTest, SafeLinkSchemes) {
  EXPECT_TRUE(is_safe_link("https://x"));
  EXPECT_TRUE(is_safe_link("HTTP://x"));
  EXPECT_TRUE(is_safe_link(" mailto:x"));
  EXPECT_FALSE(is_safe_link("javascript:x"));
  EXPECT_FALSE(is_safe_link("//evil.example"));
  EXPECT_FALSE(is_safe_link("/local"));
  EXPECT_FALSE(is_safe_link(""));
}
