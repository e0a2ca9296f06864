// The CLI's formatting: INTERFACE.md's --json shapes, the aligned tree, costs and ages, event
// lines, tree completion, and the API error → exit code mapping.
#include "cli/format.hpp"

#include <gtest/gtest.h>

#include "cli/baseline_view.hpp"
#include "cli/daemon_client.hpp"
#include "cli/wire.hpp"
#include "support/cache_usage.hpp"

using namespace loopr;
using namespace loopr::cli;
using nlohmann::json;

namespace {

json api_loop(const std::string& id, const std::string& type, const std::string& status,
              json parent = nullptr) {
  return {{"id", id},
          {"type", type},
          {"status", status},
          {"parent_id", parent},
          {"iteration", 2},
          {"max_iterations", 5},
          {"cost_usd", 0.1234},
          {"input_tokens", 1000},
          {"output_tokens", 200},
          {"artifacts", json::array({".loopr/plans/001-x.plan.md"})},
          {"worktree", "/r/.loopr/worktrees/" + id},
          {"branch", "loopr/001"},
          {"created_at", "2026-11-21T08:00:00.000Z"},
          {"updated_at", "2026-11-21T08:05:00.000Z"},
          {"plan_id", "001"},
          {"task", "Add OAuth"},
          {"status_reason", ""}};
}

// The renderers take the typed views: the daemon's JSON is decoded first, as the CLI does.
std::vector<api::LoopRow> rows_of(const json& loops) {
  return api::loop_rows_from_json(json{{"loops", loops}});
}
api::LoopDetail detail_of(const json& d) { return api::loop_detail_from_json(d); }
api::TypedEvent event(const json& e) {
  auto typed = event_of(e);
  EXPECT_TRUE(typed.has_value()) << e.dump();
  return typed.value_or(api::TypedEvent{});
}

}  // namespace

TEST(FormatTest, InterfaceLoopJsonHasExactlyTheContractFields) {
  json out = interface_loop_json(api::loop_row_from_json(api_loop("001", "plan", "running")));
  std::vector<std::string> keys;
  for (auto it = out.begin(); it != out.end(); ++it) keys.push_back(it.key());
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> expected = {
      "artifacts",    "branch",    "cost_usd",       "created_at",    "end_reason",
      "id",           "input_tokens", "iteration", "max_iterations", "output_tokens",
      "parent_id",    "status",    "type",           "updated_at",    "worktree"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(keys, expected);
  EXPECT_TRUE(out["parent_id"].is_null());
  EXPECT_EQ(out["iteration"], 2);
  EXPECT_EQ(out["artifacts"][0], ".loopr/plans/001-x.plan.md");
}

TEST(FormatTest, InterfaceShowJsonKeepsOnlyTheIterationFields) {
  json d = api_loop("001", "plan", "running");
  d["iterations"] = json::array({{{"n", 1},
                                  {"status", "failed"},
                                  {"exit_code", 1},
                                  {"cost_usd", 0.1},
                                  {"duration_ms", 1200},
                                  {"summary", "missing ## Overview"},
                                  {"extra", true}}});
  d["validation_output"] = "x";
  json out = interface_show_json(detail_of(d));
  EXPECT_FALSE(out.contains("validation_output"));
  EXPECT_FALSE(out.contains("task"));
  ASSERT_EQ(out["iterations"].size(), 1u);
  EXPECT_EQ(out["iterations"][0].size(), 6u);
  EXPECT_EQ(out["iterations"][0]["summary"], "missing ## Overview");
  EXPECT_FALSE(out["iterations"][0].contains("extra"));
}

TEST(FormatTest, CostsAgesCounts) {
  EXPECT_EQ(format_cost(0), "$0");
  EXPECT_EQ(format_cost(0.004), "$0.004");
  EXPECT_EQ(format_cost(1.5), "$1.50");
  EXPECT_EQ(format_age(42'000), "42s");
  EXPECT_EQ(format_age(5 * 60'000 + 10'000), "5m");
  EXPECT_EQ(format_age(3 * 3600'000), "3h");
  EXPECT_EQ(format_age(2 * 86400'000LL), "2d");
  EXPECT_EQ(format_age(-5), "0s");
  EXPECT_EQ(format_elapsed(65'000), "1m05s");
  EXPECT_EQ(format_elapsed(2 * 3600'000 + 3 * 60'000), "2h03m");
  EXPECT_EQ(format_count(1234567), "1,234,567");
  EXPECT_EQ(format_count(12), "12");
}

TEST(FormatTest, TreeRowsNestChildrenUnderParents) {
  json loops = json::array({api_loop("001", "plan", "complete"),
                            api_loop("001-001", "spec", "running", "001"),
                            api_loop("001-001-001", "phase", "pending", "001-001"),
                            api_loop("001-002", "spec", "pending", "001")});
  const auto typed = rows_of(loops);
  auto rows = tree_rows(typed, false);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].prefix, "");
  EXPECT_EQ(rows[1].prefix, "|- ");
  EXPECT_EQ(rows[2].prefix, "|  `- ");
  EXPECT_EQ(rows[3].prefix, "`- ");
  EXPECT_EQ(rows[3].loop->id, "001-002");
  auto unicode = tree_rows(typed, true);
  EXPECT_EQ(unicode[2].prefix, "│  └─ ");
}

TEST(FormatTest, TreeTableAlignsColumnsWithoutColour) {
  json loops = json::array(
      {api_loop("001", "plan", "complete"), api_loop("001-001", "spec", "running", "001")});
  TimestampMs now = *parse_timestamp("2026-11-21T08:10:00.000Z");
  std::string table = render_tree_table(rows_of(loops), Style{false}, now);
  EXPECT_EQ(table,
            "ID          TYPE  STATUS    ITER   COST  AGE\n"
            "001         plan  complete   2/5  $0.12  10m\n"
            "`- 001-001  spec  running    2/5  $0.12  10m\n");
  EXPECT_EQ(table.find('\x1b'), std::string::npos);
}

TEST(FormatTest, TreeTableColoursStatusesOnATerminal) {
  json loops = json::array({api_loop("001", "plan", "failed")});
  std::string table = render_tree_table(rows_of(loops), Style{true}, 0);
  EXPECT_NE(table.find("\x1b[31mfailed\x1b[0m"), std::string::npos) << table;
  // Colour codes do not break the alignment: every row is as wide on screen.
  std::istringstream in(table);
  std::string head, row;
  std::getline(in, head);
  std::getline(in, row);
  EXPECT_EQ(visible_width(head) <= visible_width(row) + 3, true);
}

TEST(FormatTest, LoopDetailsShowFieldsArtifactsValidationAndIterations) {
  json d = api_loop("001", "plan", "awaiting_approval");
  d["validation_output"] = "line one\nline two";
  d["tree_cost_usd"] = 1.0;
  d["iterations"] = json::array({{{"n", 1},
                                  {"status", "failed"},
                                  {"exit_code", 1},
                                  {"cost_usd", 0.05},
                                  {"duration_ms", 3000},
                                  {"summary", "missing section"}},
                                 {{"n", 2},
                                  {"status", "passed"},
                                  {"exit_code", 0},
                                  {"cost_usd", 0.07},
                                  {"duration_ms", 65000},
                                  {"summary", "valid plan"}}});
  std::string out =
      render_loop_details(detail_of(d), Style{false}, *parse_timestamp("2026-11-21T08:10:00.000Z"));
  for (const char* s :
       {"001  plan  awaiting_approval", "task:", "Add OAuth", "iteration:  2/5",
        "1,000 tokens in, 200 out", "whole tree $1.00", ".loopr/plans/001-x.plan.md",
        "last validation output:", "  line two", "N  RESULT  EXIT", "1m05s", "valid plan"})
    EXPECT_NE(out.find(s), std::string::npos) << s << "\n" << out;
}

TEST(FormatTest, ShowPrintsOneCacheLineForTheLoopAndItsTree) {
  json d = api_loop("001", "plan", "complete");
  loopr::testing::set_cache_usage(d);
  const TimestampMs now = *parse_timestamp("2026-11-21T08:10:00.000Z");
  std::string out = render_loop_details(detail_of(d), Style{false}, now);
  // Hit share: read / (input + read + write) = 7000/10000 and 45000/60000.
  EXPECT_NE(out.find("cache:      7,000 read, 2,000 written (70% of input read), $0.50 without "
                     "the cache; whole tree 45,000 read, 12,000 written (75% of input read), "
                     "$2.25 without the cache\n"),
            std::string::npos)
      << out;
  // show --json keeps INTERFACE.md's fields: the cache is the API's and `show`'s.
  json j = interface_show_json(detail_of(d));
  EXPECT_FALSE(j.contains("cache_read_tokens"));
  EXPECT_FALSE(j.contains("tree_usage"));

  // A code loop without the cache (a listing's row: no uncached cost known) prints no cache line;
  // with it, its own part only.
  json code = api_loop("code-001-001-001", "code", "complete", "001-001-001");
  EXPECT_EQ(render_loop_details(detail_of(code), Style{false}, now).find("cache:"),
            std::string::npos);
  code["cache_read_tokens"] = 1;
  code["input_tokens"] = 3;
  EXPECT_NE(render_loop_details(detail_of(code), Style{false}, now)
                .find("cache:      1 read, 0 written (25% of input read)\n"),
            std::string::npos);
}

TEST(FormatTest, EventLines) {
  Style plain{false};
  json e{{"seq", 3},
         {"time", "2026-11-21T08:00:00.000Z"},
         {"loop_id", "001"},
         {"type", "status_changed"},
         {"data", {{"from", "running"}, {"to", "failed"}, {"reason", "max iterations"}}}};
  std::string line = format_event_line(event(e), plain);
  EXPECT_NE(line.find("001  status_changed  running → failed: max iterations"), std::string::npos)
      << line;
  json v{{"seq", 4},
         {"time", "2026-11-21T08:00:00.000Z"},
         {"loop_id", "code-001-001-001"},
         {"type", "validation_finished"},
         {"data", {{"n", 2}, {"passed", false}, {"exit_code", 1}, {"summary", "1 test failed"}}}};
  EXPECT_NE(format_event_line(event(v), plain).find("validation 2 failed (exit 1): 1 test failed"),
            std::string::npos);
  json m{{"seq", 5},
         {"time", "2026-11-21T08:00:00.000Z"},
         {"loop_id", "001"},
         {"type", "merged"},
         {"data", {{"into", "main"}, {"sha", "0123456789abcdef"}}}};
  EXPECT_NE(format_event_line(event(m), plain).find("merged into main at 0123456789"), std::string::npos);
  json t{{"seq", 8},
         {"time", "2026-11-21T08:00:00.000Z"},
         {"loop_id", "code-001-001-001"},
         {"type", "tool_called"},
         {"data",
          {{"tool", "write_file"},
           {"input", {{"path", "add.sh"}, {"content", "echo hi"}}},
           {"turn", 1}}}};
  EXPECT_NE(format_event_line(event(t), plain).find("tool_called  write_file add.sh"), std::string::npos)
      << format_event_line(event(t), plain);
  json c{{"seq", 9},
         {"time", "2026-11-21T08:00:00.000Z"},
         {"loop_id", "code-001-001-001"},
         {"type", "tool_called"},
         {"data", {{"tool", "run_command"}, {"input", {{"command", "make test"}}}}}};
  EXPECT_NE(format_event_line(event(c), plain).find("run_command make test"), std::string::npos);
  json f{{"seq", 6},
         {"time", "2026-11-21T08:00:00.000Z"},
         {"loop_id", "001"},
         {"type", "merge_failed"},
         {"data", {{"into", "main"}, {"message", "it conflicts with main in a.txt"}}}};
  EXPECT_NE(
      format_event_line(event(f), plain).find("merge into main failed: it conflicts with main in a.txt"),
      std::string::npos);
  json r{{"seq", 7},
         {"time", "2026-11-21T08:00:00.000Z"},
         {"loop_id", "code-001-001-001"},
         {"type", "retry"},
         {"data", {{"attempt", 2}, {"archived_branch", "loopr/archive/code-001-001-001"}}}};
  EXPECT_NE(format_event_line(event(r), plain).find(
                "fresh attempt 2 (the first attempt's commits are on loopr/archive/"),
            std::string::npos);
  json d{{"seq", 1},
         {"time", "2026-11-21T08:00:00.000Z"},
         {"loop_id", ""},
         {"type", "daemon_started"},
         {"data", json::object()}};
  EXPECT_NE(format_event_line(event(d), plain).find("daemon  daemon_started"), std::string::npos);
}

TEST(FormatTest, ApiErrorsMapToExitCodesAndSplitTheHint) {
  auto e = api_error(404, json{{"error", "no loop 009 (`loopr list` shows the loops)"}});
  EXPECT_EQ(e.exit_code, kUnknownId);
  EXPECT_EQ(e.what, "no loop 009");
  EXPECT_EQ(e.hint, "`loopr list` shows the loops");
  EXPECT_EQ(api_error(409, json{{"error", "x"}}).exit_code, kWrongState);
  EXPECT_EQ(api_error(409, json{{"error", "x"}}).what, "x");
  EXPECT_FALSE(api_error(409, json{{"error", "x"}}).hint.empty());
  EXPECT_EQ(api_error(400, json{{"error", "bad (a (nested) hint)"}}).hint, "a (nested) hint");
  EXPECT_EQ(api_error(400, nullptr).exit_code, kUsage);
  EXPECT_EQ(api_error(503, nullptr).exit_code, kDaemonUnreachable);
  EXPECT_EQ(api_error(500, nullptr).exit_code, kFailed);
  EXPECT_EQ(api_error(500, nullptr).what, "the daemon answered HTTP 500");
  EXPECT_EQ(url_encode("a b/ü"), "a%20b%2F%C3%BC");
  EXPECT_EQ(daemon_not_running(RepoPaths("/r")).exit_code, kDaemonUnreachable);
  EXPECT_EQ(daemon_not_running(RepoPaths("/r")).hint, "start it with `loopr daemon`");
}

TEST(FormatTest, LoopDetailsOfAPlanSayWhereItsTreeStands) {
  json d = api_loop("001", "plan", "complete");
  d["tree_verdict"] = "merged";
  d["base_branch"] = "main";
  d["merged_into_base"] = std::string(40, 'd');
  std::string out = render_loop_details(detail_of(d), Style{false}, 0);
  EXPECT_NE(out.find("\ntree:"), std::string::npos) << out;
  EXPECT_NE(out.find("merged into main at dddddddddd\n"), std::string::npos) << out;
  d["tree_verdict"] = "merge_failed";
  d["merge_error"] = "it conflicts with main in a.txt";
  out = render_loop_details(detail_of(d), Style{false}, 0);
  EXPECT_NE(out.find("not merged into main: it conflicts with main in a.txt"), std::string::npos)
      << out;
  d["tree_verdict"] = "complete";
  out = render_loop_details(detail_of(d), Style{false}, 0);
  EXPECT_NE(out.find("`loopr merge 001` merges it into main"), std::string::npos) << out;
  EXPECT_EQ(render_loop_details(detail_of(api_loop("001-001", "spec", "running", "001")), Style{false}, 0)
                .find("\ntree:"),
            std::string::npos);
}

// proves S5.40
TEST(FormatTest, APullRequestsFieldsFromAHostileForgeAreShownNeverObeyed) {
  json d = api_loop("001", "plan", "blocked");
  d["end_reason"] = "ci_failed";
  d["tree_verdict"] = "integration_failed";
  d["base_branch"] = "main";
  d["pr"] = {{"number", 3},
             {"url", "javascript:alert(1)//\x1b]0;title\x07"},
             {"state", "open\x1b[2J"},
             {"checks", "failed\x1b[31m"},
             {"head", std::string(40, 'a')},
             {"failing", "\x1b[2Jlint\nforged: line"},
             {"error", nullptr},
             {"ci_fix_loops", 1}};
  const std::string out = render_loop_details(detail_of(d), Style{false}, 0);
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
  EXPECT_EQ(out.find("\nforged: line"), std::string::npos) << out;
  // The state and the checks are loopr's words (issue 44): any other word, this one with its
  // controls, reads as none and shows as nothing.
  EXPECT_NE(out.find("#3 javascript:alert(1)//^[]0;title^G ()\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("open^[[2J"), std::string::npos) << out;
  EXPECT_EQ(out.find("\nchecks:"), std::string::npos) << out;
  // It is the forge's CI that fails, not the local tests of the integration branch.
  EXPECT_NE(out.find("blocked: the forge's CI fails on pull request #3"), std::string::npos) << out;
  EXPECT_EQ(out.find("the integration branch fails its tests"), std::string::npos) << out;
  const std::string list = render_tree_table(rows_of(json::array({d})), Style{false}, 0, {});
  EXPECT_EQ(list.find('\x1b'), std::string::npos) << list;
  EXPECT_NE(list.find("PR #3"), std::string::npos) << list;
  EXPECT_EQ(list.find("failed^[[31m"), std::string::npos) << list;
  // loopr's own words are shown as they were.
  d["pr"]["state"] = "open";
  d["pr"]["checks"] = "failed";
  const std::string known = render_loop_details(detail_of(d), Style{false}, 0);
  EXPECT_NE(known.find("#3 javascript:alert(1)//^[]0;title^G (open)\n"), std::string::npos)
      << known;
  EXPECT_NE(known.find("\nchecks:     failed: "), std::string::npos) << known;
  EXPECT_NE(
      render_tree_table(rows_of(json::array({d})), Style{false}, 0, {}).find("PR #3 (failed)"),
      std::string::npos);
  // A PR the team merged or closed on the forge.
  d["status"] = "complete";
  d["end_reason"] = nullptr;
  d["tree_verdict"] = "complete";
  d["pr"]["state"] = "merged";
  EXPECT_NE(render_loop_details(detail_of(d), Style{false}, 0).find("pull request #3 merged on the forge"),
            std::string::npos);
  d["pr"]["state"] = "closed";
  EXPECT_NE(render_loop_details(detail_of(d), Style{false}, 0).find("`loopr merge 001` opens a new one"),
            std::string::npos);
}

TEST(BaselineViewTest, WhatTheTestsLeaveBehindIsListed) {
  loopr::api::LoopRow plan;
  plan.id = "001";
  loopr::api::BaselineView b;
  b.result = loopr::api::kBaselinePassed;
  b.sha = "0123456789abcdef";
  b.duration_ms = 2100;
  plan.baseline = b;
  const loopr::cli::Style plain;
  EXPECT_EQ(loopr::cli::render_baseline(plan, plain).find("leave behind"), std::string::npos);
  plan.baseline->outputs = {"coverage/", ".nyc_output/\x1b[31m"};
  std::string text = loopr::cli::render_baseline(plan, plain);
  EXPECT_NE(text.find("the tests leave behind (never committed; add to .gitignore?): coverage/, "
                      ".nyc_output/"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;  // a name is text, never a control
}
