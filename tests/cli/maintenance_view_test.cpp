// How `loopr stats` and `loopr gc` print their answers for people.
#include "cli/maintenance_view.hpp"

#include <gtest/gtest.h>

using namespace loopr;
using namespace loopr::cli;
using nlohmann::json;

namespace {

json spend(double cost, int in, int out, int calls, int its, json loops, long long wall) {
  return {{"cost_usd", cost},     {"input_tokens", in}, {"output_tokens", out},
          {"model_calls", calls}, {"iterations", its},  {"loops", std::move(loops)},
          {"wall_ms", wall}};
}

}  // namespace

TEST(MaintenanceViewTest, StatsHasARowPerPlanAndATotal) {
  json p1 = spend(1.25, 12000, 3000, 40, 12, {{"complete", 7}, {"total", 7}}, 600'000);
  p1["id"] = "001";
  p1["tree_verdict"] = "merged";
  json p2 = spend(0.5, 1000, 200, 3, 1, {{"failed", 1}, {"total", 1}}, 120'000);
  p2["id"] = "002";
  p2["tree_verdict"] = "failed";
  json stats = {
      {"since", nullptr},
      {"plans", {p1, p2}},
      {"total", spend(1.75, 13000, 3200, 43, 13, {{"complete", 7}, {"failed", 1}}, 720'000)}};
  std::string out = render_stats(api::stats_from_json(stats), Style{false});
  EXPECT_NE(out.find("PLAN"), std::string::npos) << out;
  EXPECT_NE(out.find("001    merged"), std::string::npos) << out;
  EXPECT_NE(out.find("$1.25"), std::string::npos) << out;
  EXPECT_NE(out.find("12,000 / 3,000"), std::string::npos) << out;
  EXPECT_NE(out.find("7 complete"), std::string::npos) << out;
  EXPECT_NE(out.find("total  2 plans"), std::string::npos) << out;
  EXPECT_NE(out.find("7 complete, 1 failed"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(render_stats(api::stats_from_json({{"since", nullptr}, {"plans", json::array()}}), Style{false}),
            "nothing spent yet: no plan in this repository\n");
}

TEST(MaintenanceViewTest, GcSaysWhatWentWhereItsWorkIsAndTheSpaceFreed) {
  json report = {{"dry_run", false},
                 {"removed",
                  {{{"kind", "worktree"},
                    {"name", ".loopr/worktrees/code-001-001-001"},
                    {"action", "archived"},
                    {"kept_on", "loopr/archive/code-001-001-001"},
                    {"bytes", 3 * 1024 * 1024},
                    {"reason", "its tree ended (failed)"}},
                   {{"kind", "branch"},
                    {"name", "loopr/001"},
                    {"action", "deleted"},
                    {"bytes", 0},
                    {"reason", "the base branch main has all of it"}}}},
                 {"errors", json::array()},
                 {"bytes_freed", 3 * 1024 * 1024},
                 {"branches_deleted", 1}};
  std::string out = render_gc(api::gc_from_json(report), Style{false});
  EXPECT_NE(out.find("archived worktree .loopr/worktrees/code-001-001-001 (3.0 MiB): its commits "
                     "are kept on loopr/archive/code-001-001-001"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("deleted branch loopr/001"), std::string::npos) << out;
  EXPECT_NE(out.find("gc: removed 2 things, 3.0 MiB freed"), std::string::npos) << out;
  report["dry_run"] = true;
  out = render_gc(api::gc_from_json(report), Style{false});
  EXPECT_NE(out.find("would archive worktree"), std::string::npos) << out;
  EXPECT_NE(out.find("gc (dry run): would remove 2 things, 3.0 MiB to free"), std::string::npos)
      << out;
}
