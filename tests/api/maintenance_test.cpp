// The maintenance answers' codec: `GET /v1/stats` and `POST /v1/gc` as the manager writes them
// (manager::to_json of Stats and GcReport) read into the views and written back unchanged;
// missing or mistyped fields read as defaults.
#include <loopr/api/maintenance.hpp>

#include <gtest/gtest.h>

using namespace loopr::api;
using nlohmann::json;

TEST(MaintenanceViewsTest, StatsRoundTrip) {
  json j = json::parse(R"({"since":"2026-11-20T00:00:00.000Z","plans":[
      {"id":"001","task":"Add OAuth","tree_verdict":"merged","cost_usd":1.25,"input_tokens":12000,
       "output_tokens":3000,"cache_read_tokens":5,"cache_write_tokens":6,"model_calls":40,
       "iterations":12,"loops":{"complete":7,"total":7},"wall_ms":600000,"iteration_ms":500000,
       "cache_hit_share":0.0,"uncached_cost_usd":0.0}],
      "total":{"cost_usd":1.25,"input_tokens":12000,"output_tokens":3000,"cache_read_tokens":5,
       "cache_write_tokens":6,"model_calls":40,"iterations":12,"loops":{"complete":7,"total":7},
       "wall_ms":600000,"iteration_ms":500000,"cache_hit_share":0.0,"uncached_cost_usd":0.0}})");
  StatsView s = stats_from_json(j);
  ASSERT_EQ(s.plans.size(), 1u);
  EXPECT_EQ(s.plans[0].tree_verdict, "merged");
  EXPECT_EQ(s.plans[0].loops.at("complete"), 7);
  EXPECT_EQ(s.total.model_calls, 40);
  EXPECT_TRUE(s.total.id.empty());
  EXPECT_EQ(to_json(s), j);
  j["since"] = nullptr;
  EXPECT_EQ(to_json(stats_from_json(j)), j);
}

TEST(MaintenanceViewsTest, GcRoundTripAndDefaults) {
  json j = json::parse(R"J({"dry_run":true,"removed":[
      {"kind":"worktree","name":".loopr/worktrees/code-001","action":"archived","bytes":4096,
       "reason":"its tree merged 8 days ago","kept_on":"loopr/archive/code-001","loop_id":"code-001"},
      {"kind":"branch","name":"loopr/001","action":"deleted","bytes":0,"reason":"merged"},
      {"kind":"logs","name":".loopr/logs/loops/code-001","action":"removed","bytes":8192,
       "reason":"its tree ended (failed)","loop_id":"code-001"}],
      "errors":["cannot remove x"],"bytes_freed":12288,"worktrees":1,"branches_deleted":1,
      "branches_archived":0,"logs":1,"logs_bytes":8192})J");
  GcView g = gc_from_json(j);
  ASSERT_EQ(g.removed.size(), 3u);
  EXPECT_EQ(g.logs, 1);
  EXPECT_EQ(g.logs_bytes, 8192u);
  EXPECT_EQ(g.removed[0].kept_on, "loopr/archive/code-001");
  EXPECT_EQ(g.removed[0].kind, GcKind::worktree);
  EXPECT_EQ(g.removed[0].action, GcAction::archived);
  EXPECT_EQ(g.removed[1].kind, GcKind::branch);
  EXPECT_EQ(g.removed[1].action, GcAction::deleted);
  EXPECT_EQ(g.removed[2].kind, GcKind::logs);
  EXPECT_EQ(g.bytes_freed, 12288u);
  EXPECT_EQ(to_json(g), j);
  GcView bad = gc_from_json(json::parse(R"({"removed":[{"bytes":"many"}, 3],"errors":{}})"));
  ASSERT_EQ(bad.removed.size(), 1u);
  EXPECT_EQ(bad.removed[0].bytes, 0u);
  EXPECT_TRUE(bad.errors.empty());
}

// Each kind and action has one word, read back as itself; a word a newer daemon may send reads as
// a removed folder (its name still says what it was), and a dry run's words are "would …".
TEST(MaintenanceViewsTest, GcKindsAndActionsAreWordsReadBackAsThemselves) {
  for (GcKind k :
       {GcKind::worktree, GcKind::branch, GcKind::registration, GcKind::folder, GcKind::logs})
    for (GcAction a :
         {GcAction::archived, GcAction::deleted, GcAction::removed, GcAction::pruned}) {
      GcView v;
      v.removed.push_back({k, "x", a, "why", "", "", 1});
      GcView back = gc_from_json(to_json(v));
      ASSERT_EQ(back.removed.size(), 1u);
      EXPECT_EQ(back.removed[0].kind, k) << to_string(k);
      EXPECT_EQ(back.removed[0].action, a) << to_string(a);
    }
  GcView newer = gc_from_json(json::parse(
      R"({"removed":[{"kind":"snapshot","name":"s1","action":"squashed","bytes":1}]})"));
  ASSERT_EQ(newer.removed.size(), 1u);
  EXPECT_EQ(newer.removed[0].kind, GcKind::folder);
  EXPECT_EQ(newer.removed[0].action, GcAction::removed);
  EXPECT_EQ(newer.removed[0].name, "s1");
  EXPECT_STREQ(would(GcAction::archived), "would archive");
  EXPECT_STREQ(would(GcAction::pruned), "would prune");
}
