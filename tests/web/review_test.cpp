// The web UI as a place to review (issue 43), as pure functions: a diff of one row per line with
// both sides' numbers, files that fold, changed words marked and hostile names escaped; the
// actions a loop's state allows; comments with their outcome; what the title says waits.
#include <gtest/gtest.h>

#include <regex>

#include <loopr/api/comments.hpp>
#include <loopr/api/views.hpp>

#include "support/cache_usage.hpp"
#include "web/html.hpp"
#include "web/pages.hpp"

using namespace loopr::web;
using nlohmann::json;

namespace {

const std::string kToken = "0123456789abcdef";

bool has(const std::string& html, const std::string& part) {
  return html.find(part) != std::string::npos;
}

/// `html` with every quoted attribute value emptied: what is left are the elements and their
/// attribute names (a value may say ` onerror=` as text).
std::string unquoted(const std::string& html) {
  return std::regex_replace(html, std::regex("\"[^\"]*\""), "\"\"");
}

std::size_t count(const std::string& html, const std::string& part) {
  std::size_t n = 0;
  for (auto at = html.find(part); at != std::string::npos; at = html.find(part, at + 1)) ++n;
  return n;
}

json row(const std::string& id, const std::string& type, const std::string& status) {
  return {{"id", id},        {"type", type},         {"status", status},
          {"plan_id", "001"}, {"iteration", 2},       {"max_iterations", 5},
          {"task", "t"},      {"parent_id", nullptr}, {"cost_usd", 0.1}};
}

LoopView view_of(const json& detail) {
  LoopView v;
  v.detail = loopr::api::loop_detail_from_json(detail);
  return v;
}

/// A diff adding `n` lines to a new file.
std::string added_file(const std::string& name, int n) {
  std::string d = "diff --git a/" + name + " b/" + name + "\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/" + name + "\n@@ -0,0 +1," + std::to_string(n) + " @@\n";
  for (int i = 1; i <= n; ++i) d += "+line " + std::to_string(i) + "\n";
  return d;
}

}  // namespace

TEST(WebDiffTest, OneRowPerLineWithTheLineNumbersOfBothSides) {
  const std::string diff =
      "diff --git a/src/a.cpp b/src/a.cpp\nindex 1..2 100644\n--- a/src/a.cpp\n+++ b/src/a.cpp\n"
      "@@ -10,4 +10,4 @@ int f()\n keep\n-int x = 1;\n+int x = 2;\n same\n\\ No newline at end of file\n";
  std::string html = diff_html(diff, DiffContext{"code-001-001-001", kToken, {}, true});
  // No newline between rows: a line is one row, never a row and an empty line.
  EXPECT_FALSE(has(html, "\n")) << html;
  EXPECT_EQ(count(html, "<tr class=\"l "), 4u) << html;
  EXPECT_EQ(count(html, "<tr class=\"hunk\">"), 1u);
  EXPECT_EQ(count(html, "<tr class=\"note\">"), 1u);
  EXPECT_TRUE(has(html, "data-rows=\"6\"")) << html;
  // keep: 10/10; removed: old 11; added: new 11; same: 12/12.
  EXPECT_TRUE(has(html, "data-side=\"new\" data-line=\"10\"><td class=\"ln\">10</td><td "
                        "class=\"ln\">10</td>")) << html;
  EXPECT_TRUE(has(html, "data-side=\"old\" data-line=\"11\"><td class=\"ln\">11</td><td "
                        "class=\"ln\"></td>")) << html;
  EXPECT_TRUE(has(html, "data-side=\"new\" data-line=\"11\"><td class=\"ln\"></td><td "
                        "class=\"ln\">11</td>")) << html;
  EXPECT_TRUE(has(html, "<td class=\"ln\">12</td><td class=\"ln\">12</td>")) << html;
  // The changed word is marked on both lines; the rest is plain.
  EXPECT_TRUE(has(html, "int x = <span class=\"w\">1</span>;")) << html;
  EXPECT_TRUE(has(html, "int x = <span class=\"w\">2</span>;")) << html;
  // The file's header folds, names the file with its counts and links the whole file.
  EXPECT_TRUE(has(html, "<details class=\"dfile\" open data-file=\"src/a.cpp\"><summary><span "
                        "class=\"fname\">src/a.cpp</span>")) << html;
  EXPECT_TRUE(has(html, "<span class=\"a\">+1</span> <span class=\"d\">-1</span>")) << html;
  EXPECT_TRUE(has(html, "href=\"/loop/code-001-001-001/file?token=" + kToken +
                        "&amp;path=src%2Fa.cpp\">whole file</a>")) << html;
  EXPECT_TRUE(has(html, "data-comment=\"yes\""));
}

TEST(WebDiffTest, AFortyLineChangeIsFortyLineRows) {
  std::string html = diff_html(added_file("code/forty.txt", 40), DiffContext{});
  EXPECT_EQ(count(html, "<tr class=\"l add\""), 40u);
  EXPECT_TRUE(has(html, "data-rows=\"41\"")) << html;  // and the hunk header
  EXPECT_TRUE(has(html, "<div class=\"fmeta\">new file mode 100644</div>")) << html;
  EXPECT_FALSE(has(html, "index 0000000")) << html;
}

TEST(WebDiffTest, HostileNamesAndLinesStayText) {
  // A name with a newline and markup (git C-quotes it), a line that closes a script element,
  // a carriage return that would break the row in two.
  const std::string diff =
      "diff --git \"a/x\\n</script><img src=x onerror=alert(1)>\" \"b/x\\n</script><img src=x "
      "onerror=alert(1)>\"\n--- /dev/null\n+++ \"b/x\\n</script><img src=x onerror=alert(1)>\"\n"
      "@@ -0,0 +1,2 @@\n+</script><script>alert(2)</script>\n+a\rb\n";
  std::string html = diff_html(diff, DiffContext{"code-001-001-001", kToken, {}, true});
  EXPECT_FALSE(has(html, "<script")) << html;
  EXPECT_FALSE(has(html, "<img")) << html;
  EXPECT_FALSE(std::regex_search(unquoted(html), std::regex(R"(<[a-zA-Z][^>]*\son[a-z]+\s*=)"))) << html;
  EXPECT_TRUE(has(html, "data-file=\"x\n&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;\""))
      << html;
  EXPECT_TRUE(has(html, "&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;")) << html;
  EXPECT_TRUE(has(html, "a\xE2\x90\x8D"
                        "b")) << html;
  EXPECT_FALSE(has(html, "\r")) << html;
  // The link's path is percent-encoded, so the newline cannot end the attribute.
  EXPECT_TRUE(has(html, "path=x%0A%3C%2Fscript%3E")) << html;
}

TEST(WebDiffTest, ChangedWordsAreMarkedOnCharacterBoundaries) {
  const std::string diff =
      "diff --git a/u b/u\n--- a/u\n+++ b/u\n@@ -1 +1 @@\n-caf\xC3\xA9 noir\n+caf\xC3\xA8 noir\n";
  std::string html = diff_html(diff, DiffContext{});
  EXPECT_TRUE(has(html, "caf<span class=\"w\">\xC3\xA9</span> noir")) << html;
  EXPECT_TRUE(has(html, "caf<span class=\"w\">\xC3\xA8</span> noir")) << html;
  EXPECT_FALSE(has(html, "\xEF\xBF\xBD")) << html;  // no character cut in two
}

TEST(WebDiffTest, ACommentShowsUnderItsLineWithItsOutcome) {
  loopr::api::DiffComment sent{
      1, "src/a.cpp", 11, loopr::api::DiffSide::new_file, "<b>use 3</b>", 0, 4};
  loopr::api::DiffComment old{
      2, "src/a.cpp", 11, loopr::api::DiffSide::old_file, "why was this 1?", 0, 0};
  const std::string diff =
      "diff --git a/src/a.cpp b/src/a.cpp\n--- a/src/a.cpp\n+++ b/src/a.cpp\n@@ -10,2 +10,2 @@\n"
      " keep\n-int x = 1;\n+int x = 2;\n";
  std::string html = diff_html(diff, DiffContext{"code-001-001-001", kToken, {sent, old}, true});
  const auto del = html.find("data-side=\"old\" data-line=\"11\"");
  const auto add = html.find("data-side=\"new\" data-line=\"11\"");
  const auto c2 = html.find("<div class=\"comment pending\" data-n=\"2\"");
  const auto c1 = html.find("<div class=\"comment sent\" data-n=\"1\"");
  ASSERT_NE(c1, std::string::npos) << html;
  ASSERT_NE(c2, std::string::npos) << html;
  EXPECT_LT(del, c2);
  EXPECT_LT(c2, add);
  EXPECT_LT(add, c1);
  EXPECT_TRUE(has(html, "&lt;b&gt;use 3&lt;/b&gt;")) << html;
  EXPECT_TRUE(has(html, "iteration <a href=\"/loop/code-001-001-001/iterations/4?token=" +
                        kToken + "\">#4</a> took it")) << html;
}

TEST(WebActionsTest, EachStateOffersTheActionsTheCliAllows) {
  auto forms = [](const json& d) { return action_forms(view_of(d), kToken); };
  std::string running = forms(row("code-001-001-001", "code", "running"));
  EXPECT_TRUE(has(running, "action=\"/loop/code-001-001-001/pause\"")) << running;
  EXPECT_TRUE(has(running, "action=\"/loop/code-001-001-001/stop\"")) << running;
  EXPECT_FALSE(has(running, "/resume")) << running;
  EXPECT_FALSE(has(running, "/iterate")) << running;
  EXPECT_TRUE(has(running, "name=\"token\" value=\"" + kToken + "\"")) << running;

  std::string paused = forms(row("code-001-001-001", "code", "paused"));
  EXPECT_TRUE(has(paused, "/resume\"")) << paused;
  EXPECT_TRUE(has(paused, "/iterate\"")) << paused;
  EXPECT_FALSE(has(paused, "/pause\"")) << paused;

  for (const char* s : {"failed", "stopped"}) {
    std::string ended = forms(row("001-001", "spec", s));
    EXPECT_TRUE(has(ended, "/iterate\"")) << s;
    EXPECT_FALSE(has(ended, "/stop\"")) << s;
  }
  EXPECT_EQ(forms(row("code-001-001-001", "code", "complete")), "");

  json manual = row("001", "plan", "complete");
  manual["tree_verdict"] = "complete";
  std::string merge = forms(manual);
  EXPECT_TRUE(has(merge, "action=\"/loop/001/merge\"")) << merge;
  EXPECT_TRUE(has(merge, "action=\"/loop/001/iterate\"")) << merge;
  json held = row("001", "plan", "blocked");
  held["end_reason"] = "held_for_review";
  EXPECT_TRUE(has(forms(held), "/merge\""));
  json merged = manual;
  merged["tree_verdict"] = "merged";
  merged["merged_into_base"] = "abc";
  EXPECT_FALSE(has(forms(merged), "/merge\""));
}

TEST(WebActionsTest, UnderMergePrThePageOffersARetryOfAFailedPushNotAMerge) {
  auto forms = [](const json& d) { return action_forms(view_of(d), kToken); };
  json plan = row("001", "plan", "complete");
  plan["tree_verdict"] = "complete";
  plan["pr"] = {{"number", 7}, {"url", "https://forge.test/acme/widgets/pull/7"},
                {"state", "open"}, {"checks", "passed"}, {"head", "abc"}, {"failing", nullptr},
                {"error", nullptr}, {"ci_fix_loops", 0}};
  // An open PR with passing checks: nothing of the base branch is the page's to merge.
  EXPECT_FALSE(has(forms(plan), "/merge\"")) << forms(plan);
  auto rows = loopr::api::loop_rows_from_json(json{{"loops", json::array({plan})}});
  EXPECT_EQ(waiting_summary(rows), "");
  // The push failed: `loopr merge` retries it, and the page says so.
  plan["pr"]["error"] = "git push to origin failed (loopr merge 001 retries)";
  std::string retry = forms(plan);
  EXPECT_TRUE(has(retry, "action=\"/loop/001/merge\"")) << retry;
  EXPECT_TRUE(has(retry, "Retry the push and pull request")) << retry;
  EXPECT_FALSE(has(retry, "Merge into the base branch")) << retry;
  rows = loopr::api::loop_rows_from_json(json{{"loops", json::array({plan})}});
  EXPECT_EQ(waiting_summary(rows), "plan 001's pull request failed");
  std::string confirm = confirm_body("001", "merge", kToken, "/loop/001?token=x", true);
  EXPECT_TRUE(has(confirm, "base branch is not touched")) << confirm;
  EXPECT_FALSE(has(confirm, "merged into the base branch")) << confirm;
}

TEST(WebActionsTest, StopAndMergeAskFirst) {
  std::string html = confirm_body("001", "merge", kToken, "/loop/001?token=x");
  EXPECT_TRUE(has(html, "Merge plan 001?")) << html;
  EXPECT_TRUE(has(html, "name=\"confirmed\" value=\"yes\"")) << html;
  EXPECT_TRUE(has(html, "action=\"/loop/001/merge\"")) << html;
  EXPECT_TRUE(has(confirm_body("001-001", "stop", kToken, "/"), "Stop loop 001-001?"));
}

TEST(WebActionsTest, TheCommentsSectionSendsThePendingOnesAsOneIteration) {
  LoopView v = view_of(row("code-001-001-001", "code", "failed"));
  v.comments = {{1, "a.txt", 3, loopr::api::DiffSide::new_file, "first", 0, 2}, {2, "b.txt", 1, loopr::api::DiffSide::new_file, "</script>", 0, 0},
                {3, "a.txt", 4, loopr::api::DiffSide::new_file, "third", 0, 0}};
  std::string html = comments_section(v, kToken);
  EXPECT_TRUE(has(html, "Send 2 comments as one iteration")) << html;
  EXPECT_TRUE(has(html, "action=\"/loop/code-001-001-001/send-comments\"")) << html;
  EXPECT_TRUE(has(html, "&lt;/script&gt;")) << html;
  EXPECT_FALSE(has(html, "</script>")) << html;
  EXPECT_LT(html.find("data-n=\"1\""), html.find("data-n=\"2\""));
  EXPECT_LT(html.find("data-n=\"2\""), html.find("data-n=\"3\""));
  // A running loop keeps them until it can take feedback.
  v.detail.loop.status = loopr::LoopStatus::running;
  EXPECT_FALSE(has(comments_section(v, kToken), "send-comments"));
  EXPECT_TRUE(has(comments_section(v, kToken), "once it is paused"));
}

TEST(WebActionsTest, TheTitleSaysWhatWaitsAndWhere) {
  auto rows = loopr::api::loop_rows_from_json(
      json{{"loops", json::array({row("001", "plan", "awaiting_approval"),
                                  row("code-002-001-001", "code", "awaiting_answer")})}});
  EXPECT_EQ(waiting_summary(rows), "plan 001 at the gate (+1 more)");
  PageFrame f;
  f.title = "Tree";
  f.repo = "my<repo>";
  f.waits = waiting_summary(rows);
  EXPECT_TRUE(has(page(f, ""), "<title>plan 001 at the gate (+1 more) · Tree · my&lt;repo&gt; · "
                               "loopr</title>"));
  EXPECT_EQ(waiting_summary({}), "");
}

TEST(WebActionsTest, TheForecastWarnsOnlyAtTheGate) {
  json plan = row("001", "plan", "awaiting_approval");
  plan["tree_verdict"] = "running";
  plan["forecast"] = {{"cost_usd", 2.72}, {"low", 1.0}, {"high", 4.0}, {"loops", 7},
                      {"over_limit", true}};
  LoopView at_gate = view_of(plan);
  EXPECT_TRUE(has(loop_summary_section(at_gate, kToken), "over the cost limit"));
  plan["status"] = "complete";
  plan["tree_verdict"] = "merged";
  plan["actual"] = {{"cost_usd", 0.31}, {"loops", 7}};
  LoopView merged = view_of(plan);
  EXPECT_FALSE(has(loop_summary_section(merged, kToken), "over the cost limit"));
  TreeView t;
  t.loops = {merged.detail.loop};
  t.plans["001"] = merged.detail;
  EXPECT_FALSE(has(tree_section(t, kToken), "over the cost limit"));
  t.loops = {at_gate.detail.loop};
  t.plans["001"] = at_gate.detail;
  EXPECT_TRUE(has(tree_section(t, kToken), "over the cost limit"));
}

TEST(WebActionsTest, TheLoopPageShowsTheCacheOfTheLoopAndOfItsTree) {
  json plan = row("001", "plan", "complete");
  loopr::testing::set_cache_usage(plan);
  const std::string html = loop_summary_section(view_of(plan), kToken);
  EXPECT_TRUE(has(html, "<tr><th>cache</th><td>7,000 read, 2,000 written (70% of input read), "
                        "$0.50 without the cache; whole tree 45,000 read, 12,000 written (75% of "
                        "input read), $2.25 without the cache</td></tr>"))
      << html;
  // No cache used: no row.
  EXPECT_FALSE(has(loop_summary_section(view_of(row("code-001-001-001", "code", "failed")), kToken),
                   "<th>cache</th>"));
}

TEST(WebActionsTest, APullRequestsReviewCommentsGoToAFixLoopFromThePage) {
  LoopView v = view_of(row("001", "plan", "complete"));
  EXPECT_EQ(pr_comments_section(v, kToken), "");
  v.pr_comments = {{"src/<a>.c", 3, "rev", "<script>x</script> rename it", "", ""}};
  std::string html = pr_comments_section(v, kToken);
  // The button posts to the page's route for `iterate --from-pr`; the comment stays text.
  EXPECT_TRUE(has(html, "<form method=\"post\" action=\"/loop/001/from-pr\">")) << html;
  EXPECT_TRUE(has(html, "class=\"from-pr\">Give them to a fix loop</button>")) << html;
  EXPECT_TRUE(has(html, "<code>src/&lt;a&gt;.c:3</code>")) << html;
  EXPECT_FALSE(has(html, "<script>")) << html;
  // The forge could not be asked: the problem, and nothing to send.
  v.pr_comments.clear();
  v.pr_comments_problem = "the forge answered 502";
  html = pr_comments_section(v, kToken);
  EXPECT_TRUE(has(html, "the forge answered 502")) << html;
  EXPECT_FALSE(has(html, "from-pr")) << html;
}

TEST(WebActionsTest, TheTranscriptShowsTheReview) {
  IterationFiles f;
  f.n = 1;
  f[loopr::IterationFile::review].text = "The reviewer says <script>x</script>";
  std::string html = iteration_body(f);
  EXPECT_TRUE(has(html, "<h4>Review</h4><pre class=\"review\">The reviewer says "
                        "&lt;script&gt;x&lt;/script&gt;</pre>")) << html;
  f[loopr::IterationFile::review] = {};
  f[loopr::IterationFile::review].problem = "(no review.md)";
  EXPECT_FALSE(has(iteration_body(f), "Review"));
}
