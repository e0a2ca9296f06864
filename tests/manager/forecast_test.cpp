// The forecast's arithmetic (manager/forecast.hpp): defaults without history, medians and a
// range with it, phases per spec learned from earlier specs.
#include <gtest/gtest.h>

#include <loopr/manager/forecast.hpp>

using namespace loopr;
using namespace loopr::manager;

TEST(ForecastTest, WithoutHistoryItUsesTheDefaultsAndAWideRange) {
  Forecast f = make_forecast(2, 0.10, {});
  EXPECT_EQ(f.specs, 2);
  EXPECT_EQ(f.phases, 6);             // 3 per spec
  EXPECT_EQ(f.loops, 1 + 2 + 6 + 6);  // plan, specs, phases, code
  // 0.10 spent + 2 × 0.05 + 6 × 0.03 + 6 × 0.40
  EXPECT_NEAR(f.cost_usd, 0.10 + 0.10 + 0.18 + 2.40, 1e-9);
  EXPECT_NEAR(f.low, 0.10 + (0.10 + 0.18 + 2.40) * 0.5, 1e-9);
  EXPECT_NEAR(f.high, 0.10 + (0.10 + 0.18 + 2.40) * 2.0, 1e-9);
  EXPECT_EQ(f.model_calls, 2 * 3 + 6 * 2 + 6 * 30);
  EXPECT_EQ(f.duration_ms, 60'000 + 45'000 + 600'000);  // siblings side by side
  EXPECT_NE(f.basis.find("built-in defaults"), std::string::npos) << f.basis;
}

TEST(ForecastTest, HistoryGivesMediansPercentilesAndPhasesPerSpec) {
  std::vector<LoopSample> h;
  for (int children : {1, 2, 2}) h.push_back({LoopType::spec, 0.02, 1, 2, 1000, children, {}});
  for (double c : {0.01, 0.02, 0.03}) h.push_back({LoopType::phase, c, 1, 1, 2000, -1, {}});
  for (double c : {1.0, 2.0, 3.0, 4.0}) h.push_back({LoopType::code, c, 2, 10, 10'000, -1, {}});
  Forecast f = make_forecast(3, 0, h);
  EXPECT_EQ(f.phases, 6);  // median of 1, 2, 2 is 2 per spec
  EXPECT_EQ(f.loops, 1 + 3 + 12);
  // medians: spec 0.02, phase 0.02, code 2.0 (nearest rank)
  EXPECT_NEAR(f.cost_usd, 3 * 0.02 + 6 * 0.02 + 6 * 2.0, 1e-9);
  // low: 25th percentiles; high: max(90th, 1.5 × median)
  EXPECT_NEAR(f.low, 3 * 0.02 + 6 * 0.01 + 6 * 1.0, 1e-9);
  EXPECT_NEAR(f.high, 3 * 0.03 + 6 * 0.03 + 6 * 4.0, 1e-9);
  EXPECT_EQ(f.model_calls, 3 * 2 + 6 * 1 + 6 * 10);
  EXPECT_EQ(f.duration_ms, 1000 + 2000 + 10'000);
  EXPECT_NE(f.basis.find("history: medians of 10 finished loops (3 spec, 3 phase, 4 code)"),
            std::string::npos)
      << f.basis;
}

TEST(ForecastTest, AnEmptyPlanIsThePlanAlone) {
  Forecast f = make_forecast(0, 0.25, {});
  EXPECT_EQ(f.loops, 1);
  EXPECT_DOUBLE_EQ(f.cost_usd, 0.25);
  EXPECT_EQ(f.duration_ms, 0);
}

TEST(ForecastTest, ItsJsonRoundTrips) {
  Forecast f = make_forecast(2, 0.1, {});
  f.plan_iteration = 3;
  f.made_at = 1'700'000'000'000;
  auto j = to_json(f);
  for (const char* k : {"cost_usd", "low", "high", "loops", "basis"})
    EXPECT_TRUE(j.contains(k)) << k;
  auto back = forecast_from_json(j);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->loops, f.loops);
  EXPECT_EQ(back->plan_iteration, 3);
  EXPECT_EQ(back->made_at, f.made_at);
  EXPECT_NEAR(back->cost_usd, f.cost_usd, 0.005);
  EXPECT_FALSE(forecast_from_json(nlohmann::json::array()).has_value());
}

TEST(ForecastTest, EachTypeIsPricedWithItsModelAndCachedHistoryCountsAtCachePrices) {
  Config c;
  c.loops[LoopType::code].model = "claude-haiku-5-5";
  SamplePrice price = config_sample_price(c);
  // Without history: the defaults' tokens at each type's model; haiku costs a twentieth.
  Forecast cheap = make_forecast(1, 0, {}, price);
  Forecast sonnet = make_forecast(1, 0, {}, config_sample_price(Config{}));
  EXPECT_NEAR(sonnet.cost_usd, 1 * 0.05 + 3 * 0.03 + 3 * 0.40, 1e-9) << "the defaults as before";
  EXPECT_NEAR(cheap.cost_usd, 1 * 0.05 + 3 * 0.03 + 3 * 0.40 / 20, 1e-9);
  // A code loop of history that read most of its input from the cache: priced by its tokens.
  LoopSample s{LoopType::code, 9.99, 2, 10, 10'000, -1, {}};
  s.usage.input_tokens = 100'000;
  s.usage.cache_read_tokens = 900'000;
  s.usage.output_tokens = 10'000;
  Forecast learned = make_forecast(1, 0, std::vector<LoopSample>{s}, config_sample_price(Config{}));
  const double code = (100'000 * 2.0 + 900'000 * 0.20 + 10'000 * 10.0) / 1e6;
  EXPECT_NEAR(learned.cost_usd, 1 * 0.05 + 3 * 0.03 + 3 * code, 1e-9);
  // A sample with no tokens (older records) keeps its recorded cost.
  LoopSample old{LoopType::code, 1.5, 2, 10, 10'000, -1, {}};
  EXPECT_NEAR(make_forecast(1, 0, std::vector<LoopSample>{old}, price).cost_usd,
              1 * 0.05 + 3 * 0.03 + 3 * 1.5, 1e-9);
}
