// The web UI's pages as pure functions: every model-written string ends up escaped, the forms
// carry the token, live regions are marked for the script.
#include "web/pages.hpp"

#include <gtest/gtest.h>

#include <regex>

#include <loopr/api/views.hpp>

#include "web/html.hpp"

using namespace loopr::web;
using nlohmann::json;

namespace {

const std::string kEvil = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'&";
const std::string kEvilEscaped =
    "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;";
const std::string kToken = "0123456789abcdef";

bool has(const std::string& html, const std::string& part) {
  return html.find(part) != std::string::npos;
}

/// No markup the model could have written: no script or img element, no event handler attribute.
void expect_inert(const std::string& html) {
  EXPECT_FALSE(has(html, "<script>")) << html;
  EXPECT_FALSE(has(html, "<img")) << html;
  // An event handler attribute inside a real tag (escaped text has no `<` to open one).
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(<[a-zA-Z][^>]*\son[a-z]+\s*=)"))) << html;
  EXPECT_FALSE(has(html, "href=\"javascript")) << html;
}

json row(const std::string& id, const std::string& type, const std::string& status) {
  return {{"id", id},
          {"type", type},
          {"status", status},
          {"parent_id", nullptr},
          {"plan_id", "001"},
          {"iteration", 1},
          {"max_iterations", 5},
          {"cost_usd", 0.25},
          {"task", kEvil},
          {"status_reason", kEvil},
          {"created_at", "2026-11-26T10:00:00.000Z"}};
}

/// The pages take the API's answers decoded by the CLI's decoders, so the tests build the JSON
/// the daemon sends and decode it the same way.
loopr::api::LoopRow as_row(const json& j) { return loopr::api::loop_row_from_json(j); }
loopr::api::LoopDetail as_detail(const json& j) { return loopr::api::loop_detail_from_json(j); }
std::vector<loopr::api::LoopRow> as_rows(const json& rows) {
  return loopr::api::loop_rows_from_json(json{{"loops", rows}});
}

}  // namespace

TEST(WebHtmlTest, EscapesEverythingThatMatters) {
  EXPECT_EQ(esc(kEvil), kEvilEscaped);
  EXPECT_EQ(esc(std::string("a\0b\x01\tc\n", 7)), "ab\tc\n");
  EXPECT_EQ(esc("caf\xC3\xA9 \xFF!"), "caf\xC3\xA9 \xEF\xBF\xBD!");
  // A cut-off sequence is one U+FFFD, as valid_utf8 and the terminal make it (maximal subparts).
  EXPECT_EQ(esc("\xE2\x82"), "\xEF\xBF\xBD");
}

// "Trojan Source": a bidirectional override makes the browser show the line in another order
// than the compiler reads it. The page shows each such control, and each C1 control, as a label.
TEST(WebHtmlTest, BidiOverridesAndC1ControlsAreShownAsLabelsNeverObeyed) {
  EXPECT_EQ(esc("if (role != \"user\xE2\x80\xAE \xE2\x81\xA6// admin\xE2\x81\xA9\")"),
            "if (role != &quot;user&lt;U+202E&gt; &lt;U+2066&gt;// admin&lt;U+2069&gt;&quot;)");
  EXPECT_EQ(esc("a\xC2\x9B"
                "31mb"),
            "a&lt;U+009B&gt;31mb");
  EXPECT_EQ(esc("caf\xC3\xA9 \xE2\x80\x8F"), "caf\xC3\xA9 \xE2\x80\x8F")
      << "other marks (U+200F) are shown as themselves";
  EXPECT_EQ(outside_link("https://forge.example/pr/1\xE2\x80\xAE"),
            "https://forge.example/pr/1&lt;U+202E&gt;")
      << "an address with more than ASCII is text, not a link";
}

TEST(WebHtmlTest, LinksCarryTheTokenEscaped) {
  EXPECT_EQ(href("/loop/001", "t&k"), "/loop/001?token=t%26k");
  EXPECT_EQ(href("/x", "tok", "part=body"), "/x?token=tok&amp;part=body");
  EXPECT_EQ(url_encode("a b/<"), "a%20b%2F%3C");
}

TEST(WebHtmlTest, ThePageFrameLoadsOnlyItsOwnScriptAndStyle) {
  PageFrame f;
  f.title = kEvil;
  f.repo = kEvil;
  f.token = kToken;
  f.nav = "tree";
  f.since = 42;
  f.waiting = 2;
  std::string html = page(f, "<p>body</p>");
  expect_inert(html);
  EXPECT_TRUE(has(html, "<title>" + kEvilEscaped)) << html;
  EXPECT_TRUE(has(html, "<script defer src=\"/static/app.js?token=" + kToken + "\"></script>"));
  EXPECT_TRUE(has(html, "<meta name=\"loopr-token\" content=\"" + kToken + "\">"));
  EXPECT_TRUE(has(html, "data-since=\"42\""));
  EXPECT_TRUE(has(html, "<span class=\"count\">2</span>"));
  EXPECT_EQ(html.find("<script>"), std::string::npos);  // no inline script at all
  EXPECT_EQ(html.find("style="), std::string::npos);    // no inline style
}

TEST(WebPagesTest, TheTreeEscapesModelStringsAndMarksItsLiveRegion) {
  TreeView v;
  json plan = row("001", "plan", "awaiting_approval");
  plan["tree_verdict"] = "running";
  plan["tree_cost_usd"] = 1.5;
  json code = row("code-001-001-001", "code", "awaiting_answer");
  code["question"] = kEvil;
  v.loops = as_rows(json::array({plan, row("001-001", "spec", "running"), code}));
  v.plans["001"] =
      as_detail({{"forecast", {{"cost_usd", 2.0}, {"low", 1.0}, {"high", 3.0}, {"loops", 7}}}});
  v.now_ms = 1'795'000'000'000;
  std::string html = tree_section(v, kToken);
  expect_inert(html);
  EXPECT_TRUE(has(html, "data-live=\"tree\"")) << html;
  EXPECT_TRUE(has(html, kEvilEscaped)) << html;
  EXPECT_TRUE(has(html, "asks: " + kEvilEscaped)) << html;
  EXPECT_TRUE(has(html, "href=\"/loop/001-001?token=" + kToken + "\"")) << html;
  EXPECT_TRUE(has(html, "forecast $2.00 ($1.00–$3.00), 7 loops")) << html;
  EXPECT_TRUE(has(html, "spent $1.50")) << html;
  EXPECT_TRUE(has(html, "class=\"status s-awaiting_approval\"")) << html;
  EXPECT_EQ(waiting_count(v.loops), 2);
}

TEST(WebPagesTest, AnEmptyTreeSaysHowToStart) {
  TreeView v;
  EXPECT_TRUE(has(tree_section(v, kToken), "loopr submit"));
}

TEST(WebPagesTest, TheGateRendersThePlanInertlyWithFormsThatCarryTheToken) {
  GateView v;
  GatePlan p;
  p.detail = as_detail(row("001", "plan", "awaiting_approval"));
  p.plan.path = ".loopr/plans/001-x.plan.md";
  p.plan.text = "# Plan\n\n" + kEvil + "\n\n[click](javascript:alert(3))\n\n<iframe src=x>\n";
  v.plans.push_back(p);
  json q = row("code-001-001-001", "code", "awaiting_answer");
  q["question"] = kEvil;
  v.questions.push_back(as_row(q));
  std::string html = gate_body(v, kToken);
  expect_inert(html);
  EXPECT_FALSE(has(html, "<iframe")) << html;
  EXPECT_TRUE(has(html, "<h1>Plan</h1>")) << html;
  EXPECT_TRUE(has(html, "click (javascript:alert(3))")) << html;
  EXPECT_TRUE(has(html, "action=\"/loop/001/approve\"")) << html;
  EXPECT_TRUE(has(html, "action=\"/loop/001/reject\"")) << html;
  EXPECT_TRUE(has(html, "action=\"/loop/001/iterate\"")) << html;
  EXPECT_TRUE(has(html, "action=\"/loop/code-001-001-001/answer\"")) << html;
  EXPECT_TRUE(has(html, "name=\"token\" value=\"" + kToken + "\"")) << html;
  EXPECT_TRUE(has(html, "method=\"post\"")) << html;
  EXPECT_TRUE(has(gate_body({}, kToken), "Nothing waits for you."));
}

TEST(WebPagesTest, TheLoopPageShowsFieldsArtifactsDiffAndCollapsedIterations) {
  LoopView v;
  json detail = row("001", "plan", "awaiting_approval");
  detail["tree_verdict"] = "running";
  detail["question"] = kEvil;
  detail["validation_output"] = kEvil;
  detail["progress"] = kEvil;
  detail["iterations"] = json::array({{{"n", 1}, {"status", "failed"}, {"summary", kEvil}},
                                      {{"n", 2}, {"status", "passed"}, {"summary", "ok"}}});
  v.detail = as_detail(detail);
  v.children.push_back(as_row(row("001-001", "spec", "running")));
  ShownFile a;
  a.path = ".loopr/plans/001.plan.md";
  a.text = "## Overview\n" + kEvil;
  v.artifacts.push_back(a);
  v.diff_label = "git diff main...loopr/001";
  v.diff.text = "diff --git a/x b/x\n@@ -1 +1 @@\n-" + kEvil + "\n+new\n";
  std::string html = loop_body(v, kToken);
  expect_inert(html);
  EXPECT_TRUE(has(html, "data-live=\"summary\"")) << html;
  EXPECT_TRUE(has(html, "<h2>Overview</h2>")) << html;
  EXPECT_TRUE(has(html,
                  "<td class=\"ln\">1</td><td class=\"ln\"></td><td class=\"c\"><span "
                  "class=\"sg\">-</span>" +
                      kEvilEscaped + "</td>"))
      << html;
  EXPECT_TRUE(has(html,
                  "<td class=\"ln\"></td><td class=\"ln\">1</td><td class=\"c\"><span "
                  "class=\"sg\">+</span>new</td>"))
      << html;
  EXPECT_TRUE(has(html, "<details class=\"iteration\" data-n=\"2\"")) << html;
  EXPECT_FALSE(has(html, "<details class=\"iteration\" data-n=\"2\" open")) << html;
  EXPECT_TRUE(has(html, "data-src=\"/loop/001/iterations/1?token=" + kToken + "&amp;part=body\""))
      << html;
  EXPECT_TRUE(has(html, "action=\"/loop/001/approve\"")) << html;
  // Newest iteration first.
  EXPECT_LT(html.find("data-n=\"2\""), html.find("data-n=\"1\""));
}

// proves S5.40
TEST(WebPagesTest, APullRequestsAddressIsALinkOnlyWhenItIsHttp) {
  LoopView v;
  json detail = row("001", "plan", "complete");
  detail["tree_verdict"] = "complete";
  detail["pr"] = {{"number", 1},
                  {"url", "javascript:alert(1)//"},
                  {"state", "open\x1b[2J"},
                  {"checks", "failed"},
                  {"head", nullptr},
                  {"failing", "\x1b[2Jlint" + kEvil},
                  {"error", nullptr},
                  {"ci_fix_loops", 0}};
  v.detail = as_detail(detail);
  std::string html = loop_body(v, kToken);
  expect_inert(html);
  // The state is one of loopr's words (issue 44): another word reads as none, shown as nothing.
  EXPECT_TRUE(has(html, "#1 javascript:alert(1)// ()")) << html;
  EXPECT_FALSE(has(html, "open^[[2J")) << html;
  EXPECT_FALSE(has(html, "\x1b")) << html;
  for (const char* url :
       {"JavaScript:alert(1)", "data:text/html,x", "vbscript:x", "//evil.example/x",
        "https://ok.example/x\" onmouseover=\"x", "https://a.example/\x01x"}) {
    EXPECT_FALSE(has(outside_link(url), "<a ")) << url;
  }
  EXPECT_EQ(outside_link("https://github.com/o/r/pull/1"),
            "<a href=\"https://github.com/o/r/pull/1\" rel=\"noreferrer noopener\">"
            "https://github.com/o/r/pull/1</a>");
  detail["pr"]["url"] = "https://github.com/o/r/pull/1";
  v.detail = as_detail(detail);
  EXPECT_TRUE(has(loop_body(v, kToken), "<a href=\"https://github.com/o/r/pull/1\"")) << html;
}

TEST(WebPagesTest, AQuestionGetsAnAnswerFormOnTheLoopPage) {
  LoopView v;
  json detail = row("code-001-001-001", "code", "awaiting_answer");
  detail["question"] = "Which port?";
  v.detail = as_detail(detail);
  std::string html = loop_body(v, kToken);
  EXPECT_TRUE(has(html, "The loop asks")) << html;
  EXPECT_TRUE(has(html, "action=\"/loop/code-001-001-001/answer\"")) << html;
  EXPECT_FALSE(has(html, "/approve")) << html;
}

TEST(WebPagesTest, TheTranscriptShowsPromptToolCallsAndValidationEscaped) {
  IterationFiles f;
  f.loop_id = "code-001-001-001";
  f.n = 3;
  f[loopr::IterationFile::prompt].text = "Prompt with " + kEvil;
  json user = {{"role", "user"}, {"content", "do it " + kEvil}};
  json assistant = {
      {"role", "assistant"},
      {"content",
       json::array(
           {{{"type", "text"}, {"text", "I will " + kEvil}},
            {{"type", "tool_use"}, {"name", "write_file"}, {"input", {{"path", kEvil}}}}})}};
  json result = {
      {"role", "user"},
      {"content",
       json::array(
           {{{"type", "tool_result"}, {"is_error", true}, {"content", "denied " + kEvil}}})}};
  f[loopr::IterationFile::conversation].text = user.dump() + "\n" + assistant.dump() + "\n" +
                                               result.dump() + "\nnot json " + kEvil + "\n" +
                                               json{{"receipt", {{"n", 1}}}}.dump() + "\n";
  f[loopr::IterationFile::validation].problem = "(no validation.log)";
  std::string html = iteration_body(f);
  expect_inert(html);
  EXPECT_TRUE(has(html, "<details class=\"prompt\"><summary>Prompt</summary>")) << html;
  EXPECT_TRUE(has(html, "→ write_file")) << html;
  EXPECT_TRUE(has(html, "tool-result error")) << html;
  EXPECT_TRUE(has(html, "not json " + kEvilEscaped)) << html;
  EXPECT_TRUE(has(html, "model call:")) << html;
  EXPECT_TRUE(has(html, "(no validation.log)")) << html;
}

TEST(WebPagesTest, AnErrorBodyEscapesTheMessage) {
  std::string html = error_body(kEvil, "/?token=x");
  expect_inert(html);
  EXPECT_TRUE(has(html, kEvilEscaped));
}
