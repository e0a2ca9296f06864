// Issue 42's keys: prompt caching, a model and a provider per loop type, what a cap does.
#include <gtest/gtest.h>

#include <loopr/core/config.hpp>

using namespace loopr;

TEST(ConfigCostTest, DefaultsCacheOnFiveMinutesAndPauseAtTheCap) {
  Config d;
  EXPECT_TRUE(d.llm.cache);
  EXPECT_FALSE(d.llm.cache_ttl_1h);
  EXPECT_TRUE(d.limits.pause_at_limit);
  EXPECT_EQ(d.limits.max_input_tokens, 0);
  for (const char* role : {"plan", "spec", "phase", "code", "integration-fix", "review", "judge"}) {
    EXPECT_EQ(d.model_for(role), d.llm.model) << role;
    EXPECT_EQ(d.provider_for(role), "anthropic") << role;
  }
  auto written = parse_config(default_config_yaml(), "default");
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_TRUE(written->llm.cache);
  EXPECT_TRUE(written->limits.pause_at_limit);
}

TEST(ConfigCostTest, ReadsTheKeysAndEachRoleFallsBackInOrder) {
  auto r = parse_config(
      "llm: {model: claude-sonnet-5-5, cache: off, cache_ttl: 1h}\n"
      "limits: {at_cost_limit: fail, max_input_tokens: 5000000}\n"
      "loops:\n"
      "  plan: {model: claude-opus-5-5, provider: anthropic}\n"
      "  code: {model: claude-haiku-5-5, provider: claude-code}\n"
      "  review: {model: claude-opus-5-5, provider: openai}\n",
      "c.yml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->llm.cache);
  EXPECT_TRUE(r->llm.cache_ttl_1h);
  EXPECT_FALSE(r->limits.pause_at_limit);
  EXPECT_EQ(r->limits.max_input_tokens, 5000000);
  EXPECT_EQ(r->model_for("plan"), "claude-opus-5-5");
  EXPECT_EQ(r->model_for("spec"), "claude-sonnet-5-5");
  EXPECT_EQ(r->model_for("code"), "claude-haiku-5-5");
  EXPECT_EQ(r->model_for("integration-fix"), "claude-haiku-5-5") << "a fix loop is a code loop";
  EXPECT_EQ(r->model_for("review"), "claude-opus-5-5");
  EXPECT_EQ(r->provider_for("code"), "claude-code");
  EXPECT_EQ(r->provider_for("integration-fix"), "claude-code");
  EXPECT_EQ(r->provider_for("phase"), "anthropic");
  EXPECT_EQ(r->provider_for("review"), "openai");

  auto fix = parse_config(
      "integration: {model: m-fix, provider: openai}\nloops:\n  code: {model: m-code}\n", "c.yml");
  ASSERT_TRUE(fix.ok()) << fix.error().message;
  EXPECT_EQ(fix->model_for("integration-fix"), "m-fix");
  EXPECT_EQ(fix->provider_for("integration-fix"), "openai");
}

TEST(ConfigCostTest, BadValuesNameTheKeyAndLine) {
  auto check = [](const std::string& yaml, const std::string& key) {
    auto r = parse_config(yaml, "c.yml");
    ASSERT_FALSE(r.ok()) << yaml;
    EXPECT_NE(r.error().message.find(key), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("c.yml:"), std::string::npos) << r.error().message;
  };
  check("llm:\n  cache: on\n", "llm.cache");
  check("llm:\n  cache_ttl: 10m\n", "llm.cache_ttl");
  check("limits:\n  at_cost_limit: warn\n", "limits.at_cost_limit");
  check("limits:\n  max_input_tokens: -1\n", "limits.max_input_tokens");
  check("loops:\n  code: {provider: bard}\n", "loops.code.provider");
}
