#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include <loopr/llm/pricing.hpp>

using namespace loopr;
using namespace loopr::llm;

TEST(PricingTest, UsageTimesPricePerMillionTokens) {
  Pricing pricing(Config::default_pricing());
  Usage u;
  u.input_tokens = 1'000'000;
  u.output_tokens = 500'000;
  u.cache_write_tokens = 200'000;
  u.cache_read_tokens = 4'000'000;
  // claude-opus-5-5: 4 in / 20 out / 5 cache write / 0.20 cache read per MTok.
  EXPECT_DOUBLE_EQ(pricing.cost_usd("claude-opus-5-5", u), 4.0 + 10.0 + 1.0 + 0.8);
}

TEST(PricingTest, MatchesTheClaudeCodeFixtureFigure) {
  // The recorded CLI run: 12449 input + 52 output tokens of claude-opus-5-5 cost $0.050836.
  Pricing pricing(Config::default_pricing());
  Usage u;
  u.input_tokens = 12449;
  u.output_tokens = 52;
  EXPECT_NEAR(pricing.cost_usd("claude-opus-5-5", u), 0.050836, 1e-9);
}

TEST(PricingTest, DatedSnapshotUsesTheLongestMatchingEntry) {
  Pricing pricing({{"gpt-9", {2, 2, 0, 0}}, {"gpt-9-mini", {3, 3, 0, 0}}});
  ASSERT_NE(pricing.find("gpt-9-mini-2026-01-01"), nullptr);
  EXPECT_EQ(pricing.find("gpt-9-mini-2026-01-01")->input, 3);
  EXPECT_EQ(pricing.find("gpt-9-2026")->input, 2);
  EXPECT_EQ(pricing.find("gpt-9")->input, 2);
  EXPECT_EQ(pricing.find("gpt-9x"), nullptr);  // not a snapshot of gpt-9
  EXPECT_EQ(pricing.find("gpt"), nullptr);
}

TEST(PricingTest, UnknownModelCostsZeroAndWarnsOnce) {
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));

  Pricing pricing(Config::default_pricing());
  Usage u;
  u.input_tokens = 1000;
  EXPECT_EQ(pricing.cost_usd("llama-3-70b", u), 0.0);
  EXPECT_EQ(pricing.cost_usd("llama-3-70b", u), 0.0);
  EXPECT_EQ(pricing.cost_usd("qwen-3", u), 0.0);
  spdlog::set_default_logger(previous);

  std::string text = log.str();
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("llama-3-70b"), 1u) << text;
  EXPECT_EQ(count("qwen-3"), 1u) << text;
}
