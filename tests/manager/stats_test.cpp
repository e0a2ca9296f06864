// `loopr stats`' arithmetic over loop and iteration records, in memory.
#include <gtest/gtest.h>

#include <loopr/manager/stats.hpp>

#include "manager/tree_fixture.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {

constexpr TimestampMs kHour = 3'600'000;

IterationRecord record(const std::string& loop, int n, double cost, TimestampMs finished,
                       int turns = 2) {
  IterationRecord r;
  r.loop_id = loop;
  r.n = n;
  r.status = IterationOutcome::passed;
  r.usage.input_tokens = 1000;
  r.usage.output_tokens = 100;
  r.usage.cost_usd = cost;
  r.duration_ms = 60'000;
  r.started_at = finished - r.duration_ms;
  r.finished_at = finished;
  r.details.turns = turns;
  return r;
}

// A loop whose recorded usage is exactly its records'.
Loop spent(Loop l, std::vector<IterationRecord> its, TimestampMs created, TimestampMs updated) {
  for (const auto& r : its) l.usage += r.usage;
  l.created_at = created;
  l.updated_at = updated;
  return l;
}

}  // namespace

TEST(StatsTest, SumsEachPlansTreeAndTheTotal) {
  const TimestampMs t0 = 100 * kHour;
  std::map<std::string, std::vector<IterationRecord>> its = {
      {"001", {record("001", 1, 0.10, t0 + kHour / 4)}},
      {"001-001", {record("001-001", 1, 0.20, t0 + kHour / 2, 3)}},
      {"002", {record("002", 1, 0.05, t0 + 3 * kHour), record("002", 2, 0.05, t0 + 4 * kHour)}},
  };
  std::vector<Loop> loops = {
      spent(finished("001"), its["001"], t0, t0 + kHour),
      spent(finished("001-001"), its["001-001"], t0, t0 + kHour),
      spent(loop("002", LoopStatus::failed, 2), its["002"], t0 + 2 * kHour, t0 + 4 * kHour),
  };
  loops[0].tree.tree_complete = true;
  loops[0].tree.merged_into_base = std::string(40, 'b');
  loops[2].tree.user_rejected = true;
  Stats s = compute_stats(loops, its, 0, t0 + 10 * kHour, MergeMode::automatic);
  ASSERT_EQ(s.plans.size(), 2u);
  const SpendStats& a = s.plans[0];
  EXPECT_EQ(a.id, "001");
  EXPECT_EQ(a.verdict, "merged");
  EXPECT_DOUBLE_EQ(a.usage.cost_usd, 0.30);
  EXPECT_EQ(a.usage.input_tokens, 2000);
  EXPECT_EQ(a.model_calls, 5);
  EXPECT_EQ(a.iterations, 2);
  EXPECT_EQ(a.loops.at("complete"), 2);
  EXPECT_EQ(a.wall_ms, kHour);  // submit to its last change: it ended
  EXPECT_EQ(a.iteration_ms, 120'000);
  const SpendStats& b = s.plans[1];
  EXPECT_EQ(b.verdict, "failed");
  EXPECT_EQ(b.loops.at("failed"), 1);
  EXPECT_EQ(b.wall_ms, 2 * kHour);
  EXPECT_DOUBLE_EQ(s.total.usage.cost_usd, 0.40);
  EXPECT_EQ(s.total.iterations, 4);
  EXPECT_EQ(s.total.model_calls, 9);
  EXPECT_EQ(s.total.wall_ms, 3 * kHour);
}

TEST(StatsTest, SpendingWithoutAnIterationRecordCountsToo) {
  // Model calls that failed for good cost tokens but leave no iteration record.
  std::map<std::string, std::vector<IterationRecord>> its = {{"001", {record("001", 1, 0.10, 50)}}};
  Loop plan = spent(loop("001", LoopStatus::failed), its["001"], 0, 60);
  plan.tree.rolled_up = true;
  plan.usage.cost_usd += 0.25;
  plan.usage.input_tokens += 500;
  Stats s = compute_stats(std::vector<Loop>{plan}, its, 0, 100, MergeMode::automatic);
  ASSERT_EQ(s.plans.size(), 1u);
  EXPECT_DOUBLE_EQ(s.plans[0].usage.cost_usd, 0.35);
  EXPECT_EQ(s.plans[0].usage.input_tokens, 1500);
  EXPECT_EQ(s.plans[0].iterations, 1);
}

TEST(StatsTest, SinceCountsOnlyWhatHappenedAfterIt) {
  const TimestampMs t0 = 100 * kHour;
  std::map<std::string, std::vector<IterationRecord>> its = {
      {"001", {record("001", 1, 1.0, t0 + kHour)}},
      {"002", {record("002", 1, 0.5, t0 + 5 * kHour), record("002", 2, 0.25, t0 + 7 * kHour)}},
  };
  std::vector<Loop> loops = {
      spent(loop("001", LoopStatus::stopped), its["001"], t0, t0 + kHour),
      spent(loop("002", LoopStatus::running, 2), its["002"], t0 + 4 * kHour, t0 + 7 * kHour),
  };
  const TimestampMs now = t0 + 8 * kHour;
  Stats s = compute_stats(loops, its, t0 + 6 * kHour, now, MergeMode::automatic);
  ASSERT_EQ(s.plans.size(), 1u);  // 001 did nothing since
  EXPECT_EQ(s.plans[0].id, "002");
  EXPECT_DOUBLE_EQ(s.plans[0].usage.cost_usd, 0.25);
  EXPECT_EQ(s.plans[0].iterations, 1);
  EXPECT_EQ(s.plans[0].verdict, "running");
  EXPECT_EQ(s.plans[0].wall_ms, 2 * kHour);  // from `since` to now: it still runs
  nlohmann::json j = to_json(s);
  EXPECT_TRUE(j["since"].is_string());
  EXPECT_EQ(j["plans"][0]["loops"]["running"], 1);
  EXPECT_EQ(j["plans"][0]["loops"]["total"], 1);
  EXPECT_EQ(j["total"]["iterations"], 1);
  EXPECT_FALSE(j["total"].contains("id"));
}

TEST(StatsTest, AnEmptyStoreHasEmptyStats) {
  Stats s = compute_stats({}, {}, 0, 1000, MergeMode::automatic);
  EXPECT_TRUE(s.plans.empty());
  nlohmann::json j = to_json(s);
  EXPECT_TRUE(j["since"].is_null());
  EXPECT_EQ(j["total"]["cost_usd"], 0.0);
  EXPECT_EQ(j["total"]["loops"]["total"], 0);
}

TEST(StatsTest, TheCacheIsCountedWithItsShareAndTheCostWithoutIt) {
  const TimestampMs t0 = 100 * kHour;
  IterationRecord cached = record("001", 1, 0.10, t0 + kHour);
  cached.usage.input_tokens = 1000;
  cached.usage.cache_read_tokens = 8000;
  cached.usage.cache_write_tokens = 1000;
  cached.details.uncached_cost_usd = 0.50;
  IterationRecord older = record("001", 2, 0.20, t0 + 2 * kHour);  // no uncached_cost_usd: its cost
  std::map<std::string, std::vector<IterationRecord>> its = {{"001", {cached, older}}};
  std::vector<Loop> loops = {spent(finished("001"), its["001"], t0, t0 + 2 * kHour)};
  Stats s = compute_stats(loops, its, 0, t0 + 3 * kHour, MergeMode::automatic);
  ASSERT_EQ(s.plans.size(), 1u);
  EXPECT_DOUBLE_EQ(s.plans[0].uncached_cost_usd, 0.70);
  nlohmann::json j = to_json(s);
  EXPECT_EQ(j["total"]["cache_read_tokens"], 8000);
  EXPECT_EQ(j["total"]["cache_write_tokens"], 1000);
  EXPECT_DOUBLE_EQ(j["total"]["uncached_cost_usd"].get<double>(), 0.70);
  // 8,000 of 11,000 input tokens (1,000 + 1,000 uncached, 1,000 written, 8,000 read).
  EXPECT_NEAR(j["total"]["cache_hit_share"].get<double>(), 8000.0 / 11000.0, 1e-9);
}
