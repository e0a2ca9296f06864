// The views' codec: the daemon's JSON read into structs and written back unchanged.
#include <gtest/gtest.h>

#include <loopr/api/views.hpp>

using namespace loopr;
using namespace loopr::api;
using json = nlohmann::json;

namespace {

const char* kPlanRow = R"({
  "id":"001","type":"plan","status":"blocked","parent_id":null,"iteration":2,"max_iterations":5,
  "cost_usd":0.5,"input_tokens":1000,"output_tokens":200,
  "cache_read_tokens":7000,"cache_write_tokens":2000,"uncached_cost_usd":0.75,
  "artifacts":[".loopr/plans/001-x.plan.md"],"worktree":"/r/.loopr/worktrees/001",
  "branch":"loopr/001-loops/001","created_at":"2026-11-26T10:00:00.000Z",
  "updated_at":"2026-11-26T10:05:00.000Z","end_reason":"integration_failed",
  "plan_id":"001","task":"Add x","status_reason":"its integration branch fails",
  "tree_verdict":"integration_failed","base_branch":"main","merged_into_base":null,
  "merge_error":null,"tree_cost_usd":1.25,
  "tree_usage":{"input_tokens":3000,"output_tokens":900,"cache_read_tokens":45000,
                "cache_write_tokens":12000,"uncached_cost_usd":2.5},
  "integration":{"result":"failed","sha":"abc","summary":"exit 1","output":"boom","log":"l","fix_loops":1},
  "baseline":{"result":"passed","sha":"abc","summary":null,"output":null,"log":null,
              "duration_ms":2100,"setup_ms":400,"outputs":[]},"pr":null,
  "held":{"paths":[".vscode/tasks.json"]}
})";

}  // namespace

TEST(ViewsTest, APlanRowReadsTypedAndWritesBackTheSame) {
  json j = json::parse(kPlanRow);
  LoopRow r = loop_row_from_json(j);
  EXPECT_EQ(r.type, LoopType::plan);
  EXPECT_EQ(r.status, LoopStatus::blocked);
  EXPECT_EQ(r.end_reason, EndReason::integration_failed);
  ASSERT_TRUE(r.tree_verdict);
  EXPECT_EQ(*r.tree_verdict, TreeVerdict::integration_failed);
  ASSERT_TRUE(r.integration);
  EXPECT_EQ(r.integration->fix_loops, 1);
  EXPECT_EQ(*r.tree_cost_usd, 1.25);
  EXPECT_TRUE(r.parent_id.empty());
  ASSERT_TRUE(r.baseline);
  EXPECT_EQ(r.baseline->duration_ms, 2100);
  EXPECT_EQ(r.extra, json::parse(R"({"held":{"paths":[".vscode/tasks.json"]}})"));  // kept
  EXPECT_EQ(to_json(r), j);
}

// Issue 44: a plan row's pull request carries its state and checks typed, written back as the
// same words; a word this loopr does not know reads as none (null), never as a state.
TEST(ViewsTest, APullRequestsStateAndChecksReadTypedAndWriteBackTheSame) {
  json j = json::parse(kPlanRow);
  j["pr"] = {{"number", 7},      {"url", "https://github.com/acme/widgets/pull/7"},
             {"state", "open"},  {"checks", "pending"},
             {"head", "abc"},    {"failing", nullptr},
             {"error", nullptr}, {"ci_fix_loops", 0}};
  for (auto [state, word] :
       {std::pair{PullRequestState::open, "open"}, std::pair{PullRequestState::closed, "closed"},
        std::pair{PullRequestState::merged, "merged"}}) {
    j["pr"]["state"] = word;
    for (auto [checks, text] :
         {std::pair{PrChecks::pending, "pending"}, std::pair{PrChecks::passed, "passed"},
          std::pair{PrChecks::failed, "failed"}, std::pair{PrChecks::skipped, "skipped"}}) {
      j["pr"]["checks"] = text;
      LoopRow r = loop_row_from_json(j);
      ASSERT_TRUE(r.pr);
      EXPECT_EQ(r.pr->state, state) << word;
      EXPECT_EQ(r.pr->checks, checks) << text;
      EXPECT_EQ(to_json(r), j);
    }
  }
  j["pr"]["state"] = "draft";
  j["pr"]["checks"] = "PASSED";
  LoopRow r = loop_row_from_json(j);
  EXPECT_EQ(r.pr->state, PullRequestState::none);
  EXPECT_EQ(r.pr->checks, PrChecks::none);
  EXPECT_TRUE(to_json(r)["pr"]["state"].is_null());
  EXPECT_TRUE(to_json(r)["pr"]["checks"].is_null());
}

TEST(ViewsTest, TheCacheFiguresOfALoopAndItsTreeRoundTrip) {
  LoopRow r = loop_row_from_json(json::parse(kPlanRow));
  EXPECT_EQ(r.cache_read_tokens, 7000);
  EXPECT_EQ(r.cache_write_tokens, 2000);
  ASSERT_TRUE(r.uncached_cost_usd);
  EXPECT_EQ(*r.uncached_cost_usd, 0.75);
  ASSERT_TRUE(r.tree_usage);
  EXPECT_EQ(r.tree_usage->input_tokens, 3000);
  EXPECT_EQ(r.tree_usage->output_tokens, 900);
  EXPECT_EQ(r.tree_usage->cache_read_tokens, 45000);
  EXPECT_EQ(r.tree_usage->cache_write_tokens, 12000);
  EXPECT_EQ(r.tree_usage->uncached_cost_usd, 2.5);
  EXPECT_TRUE(r.extra.find("tree_usage") == r.extra.end());  // typed, not kept as unknown
  // A listing's row: the loop's own reads and writes, no uncached cost (null: not read).
  Loop l;
  l.id = "code-001-001-001";
  l.type = LoopType::code;
  l.usage.input_tokens = 10;
  l.usage.cache_read_tokens = 80;
  l.usage.cache_write_tokens = 30;
  json row = to_json(row_of(l));
  EXPECT_EQ(row["cache_read_tokens"], 80);
  EXPECT_EQ(row["cache_write_tokens"], 30);
  EXPECT_FALSE(row.contains("uncached_cost_usd"));
  EXPECT_FALSE(row.contains("tree_usage"));
  const LoopRow back = loop_row_from_json(row);
  EXPECT_FALSE(back.uncached_cost_usd);
  EXPECT_FALSE(back.tree_usage);
  EXPECT_EQ(back.cache_read_tokens, 80);
  EXPECT_NEAR(cache_hit_share(10, 80, 30), 80.0 / 120.0, 1e-12);
  EXPECT_EQ(cache_hit_share(0, 0, 0), 0.0);
  EXPECT_EQ(cache_summary(10, 0, 0, 1.0), "");
  EXPECT_EQ(cache_summary(10, 80, 30, std::nullopt), "80 read, 30 written (67% of input read)");
}

TEST(ViewsTest, AWaitingLoopCarriesItsQuestion) {
  json j = json::parse(kPlanRow);
  j["question"] = "which port?";
  j["answer"] = nullptr;
  LoopRow r = loop_row_from_json(j);
  ASSERT_TRUE(r.question);
  EXPECT_FALSE(r.answer);
  EXPECT_EQ(to_json(r), j);
}

TEST(ViewsTest, ADetailWithIterationsForecastAndActual) {
  json j = json::parse(kPlanRow);
  j["iterations"] = json::parse(R"([{"n":1,"status":"failed","exit_code":null,"cost_usd":0.1,
      "input_tokens":10,"output_tokens":2,"duration_ms":5,"summary":"s","cache_read_tokens":0,
      "cache_write_tokens":0,"uncached_cost_usd":0.0}])");
  j["validation_output"] = "out";
  j["progress"] = "p";
  j["input_artifact"] = "";
  j["conflicts"] = {"a.txt"};
  j["forecast"] = json::parse(R"({"cost_usd":1.5,"low":1.0,"high":2.5,"loops":9,"basis":"b",
      "specs":2,"phases":6,"model_calls":40,"duration_ms":60000,"plan_iteration":1,
      "made_at":"2026-11-26T10:00:00.000Z","max_cost_usd":25.0,"over_limit":false})");
  j["actual"] = json::parse(R"({"cost_usd":1.25,"loops":9,"model_calls":38,"duration_ms":50000})");
  LoopDetail d = loop_detail_from_json(j);
  ASSERT_EQ(d.iterations.size(), 1u);
  EXPECT_FALSE(d.iterations[0].exit_code);
  EXPECT_EQ(d.conflicts, std::vector<std::string>{"a.txt"});
  ASSERT_TRUE(d.forecast);
  EXPECT_EQ(d.forecast->specs, 2);
  ASSERT_TRUE(d.actual);
  EXPECT_EQ(d.actual->model_calls, 38);
  EXPECT_EQ(to_json(d), j);
}

TEST(ViewsTest, WrongTypesReadAsDefaultsNeverThrow) {
  LoopRow r = loop_row_from_json(json::parse(R"({"id":7,"status":"sideways","iteration":"x"})"));
  EXPECT_EQ(r.id, "");
  EXPECT_EQ(r.status, LoopStatus::pending);
  EXPECT_EQ(r.iteration, 0);
  EXPECT_TRUE(loop_rows_from_json(json::parse("[1,2]")).empty());
  EXPECT_EQ(loop_rows_from_json(json::parse(R"({"loops":[{"id":"001"}]})")).size(), 1u);
}

TEST(ViewsTest, RowOfAStoredLoopIsTheInterfaceShape) {
  Loop l;
  l.id = "code-001-001-001";
  l.type = LoopType::code;
  l.status = LoopStatus::failed;
  l.parent_id = "001-001-001";
  l.plan_id = "001";
  ASSERT_TRUE(true);
  l.end_reason = EndReason::no_progress;
  json j = to_json(row_of(l));
  json api = to_api_json(l);
  for (auto it = api.begin(); it != api.end(); ++it) EXPECT_EQ(j[it.key()], it.value()) << it.key();
  EXPECT_EQ(j["plan_id"], "001");
}

TEST(ViewsTest, Health) {
  json j = json::parse(R"({"ok":true,"pid":9,"started_at":"2026-11-26T10:00:00.000Z","uptime_s":60,
      "repo":"/r","active_runs":2,"stopping":false,"draining":false,"sandbox":{"kind":"bubblewrap","confined":true,
      "description":"bwrap 0.8","available":true,"problem":null,"seccomp":true,
      "executor":{"kind":"slurm","jobs_queued":1,"jobs_running":2,"jobs_cleaning":0}},
      "loops":{"total":3,"running":2,"complete":1},"web":{"url":"http://127.0.0.1:1/","port":1},
      "disk":null,"draining":false,"future":1})");
  Health h = health_from_json(j);
  EXPECT_EQ(h.loops["running"], 2);
  EXPECT_EQ(h.sandbox.kind, "bubblewrap");
  ASSERT_TRUE(h.sandbox.executor);
  EXPECT_TRUE(h.sandbox.executor->slurm());
  EXPECT_EQ(h.sandbox.executor->jobs_running, 2);
  EXPECT_TRUE(h.sandbox.extra.contains("seccomp"));  // a field this loopr does not know
  ASSERT_TRUE(h.web);
  EXPECT_EQ(h.web->port, 1);
  EXPECT_TRUE(h.extra.contains("future"));  // a field this loopr does not know, kept
  EXPECT_EQ(to_json(h), j);
}
