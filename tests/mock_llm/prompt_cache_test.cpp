// mock-llm's emulation of Anthropic prompt caching (mock_llm/prompt_cache.hpp): what a request
// reads and writes by the documented rules, and the 400s for breakpoints the service refuses.
#include <gtest/gtest.h>

#include <mock_llm/engine.hpp>
#include <mock_llm/prompt_cache.hpp>

namespace loopr::mock_llm {
namespace {

using namespace std::chrono_literals;

Json text(const std::string& t, bool mark = false, const std::string& ttl = "") {
  Json b = {{"type", "text"}, {"text", t}};
  if (mark) {
    b["cache_control"] = {{"type", "ephemeral"}};
    if (!ttl.empty()) b["cache_control"]["ttl"] = ttl;
  }
  return b;
}

// A body whose system block (~2,000 tokens) is a breakpoint, then `turns` user/assistant pairs,
// the newest user message marked.
Json body(int turns, const std::string& system = std::string(8000, 's'), bool mark_newest = true) {
  Json messages = Json::array();
  for (int i = 0; i < turns; ++i) {
    if (i > 0)
      messages.push_back(
          {{"role", "assistant"}, {"content", Json::array({text("answer " + std::to_string(i))})}});
    bool last = i + 1 == turns;
    messages.push_back(
        {{"role", "user"},
         {"content", Json::array({text(std::string(2000, 'a' + i), last && mark_newest)})}});
  }
  return {{"model", "claude-sonnet-5-5"},
          {"max_tokens", 100},
          {"system", Json::array({text(system, true)})},
          {"messages", messages}};
}

TEST(MockPromptCache, FirstRequestWritesTheNextReadsItAndWritesOnlyTheNewPart) {
  PromptCache cache;
  auto t0 = PromptCache::Clock::now();
  CacheUsage first = cache.account(body(1), "key", t0);
  EXPECT_EQ(first.cache_read_input_tokens, 0);
  EXPECT_GT(first.cache_creation_input_tokens, 2000);
  CacheUsage second = cache.account(body(2), "key", t0 + 1s);
  EXPECT_EQ(second.cache_read_input_tokens, first.cache_creation_input_tokens)
      << "reads what the turn before wrote (found within the lookback before its breakpoint)";
  EXPECT_GT(second.cache_creation_input_tokens, 0);
  EXPECT_LT(second.cache_creation_input_tokens, first.cache_creation_input_tokens);
}

TEST(MockPromptCache, BelowTheMinimumNothingIsCached) {
  PromptCache cache(1024);
  Json small = {
      {"model", "m"},
      {"max_tokens", 1},
      {"messages",
       Json::array({{{"role", "user"}, {"content", Json::array({text("short", true)})}}})}};
  CacheUsage u = cache.account(small, "key");
  EXPECT_EQ(u.cache_creation_input_tokens, 0);
  EXPECT_EQ(cache.account(small, "key").cache_read_input_tokens, 0);
  EXPECT_GT(u.input_tokens, 0);
}

TEST(MockPromptCache, OneByteOfDifferenceInThePrefixMissesAndAnotherKeyReadsNothing) {
  PromptCache cache;
  auto t0 = PromptCache::Clock::now();
  cache.account(body(1), "key", t0);
  EXPECT_EQ(cache.account(body(1, std::string(7999, 's') + "x"), "key", t0).cache_read_input_tokens,
            0);
  EXPECT_EQ(cache.account(body(1), "another key", t0).cache_read_input_tokens, 0)
      << "a cache is its key's: another repository's key reads none of it";
  Json other_model = body(1);
  other_model["model"] = "claude-opus-5-5";
  EXPECT_EQ(cache.account(other_model, "key", t0).cache_read_input_tokens, 0);
  EXPECT_GT(cache.account(body(1), "key", t0).cache_read_input_tokens, 0);
}

TEST(MockPromptCache, EntriesExpireAfterTheirTtlAndAHitRefreshesIt) {
  PromptCache cache;
  auto t0 = PromptCache::Clock::now();
  cache.account(body(1), "key", t0);
  EXPECT_GT(cache.account(body(1), "key", t0 + 4min).cache_read_input_tokens, 0);
  EXPECT_GT(cache.account(body(1), "key", t0 + 8min).cache_read_input_tokens, 0)
      << "refreshed at 4 min";
  EXPECT_EQ(cache.account(body(1), "key", t0 + 14min).cache_read_input_tokens, 0) << "expired";
  Json hour = body(1);
  hour["system"][0]["cache_control"]["ttl"] = "1h";
  cache.account(hour, "key", t0 + 20min);
  EXPECT_GT(cache.account(hour, "key", t0 + 70min).cache_read_input_tokens, 0);
}

TEST(MockPromptCache, TheServiceRefusesFiveBreakpointsAndEmptyOrThinkingOnes) {
  Json five = body(3);
  five["messages"][0]["content"][0]["cache_control"] = {{"type", "ephemeral"}};
  five["messages"][1]["content"][0]["cache_control"] = {{"type", "ephemeral"}};
  five["messages"][3]["content"][0]["cache_control"] = {{"type", "ephemeral"}};
  EXPECT_FALSE(check_cache_breakpoints(body(3)));
  auto e = check_cache_breakpoints(five);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 400);
  EXPECT_NE(e->message.find("maximum of 4"), std::string::npos);
  Json empty = body(1);
  empty["messages"][0]["content"].push_back(text("", true));
  ASSERT_TRUE(check_cache_breakpoints(empty));
  EXPECT_NE(check_cache_breakpoints(empty)->message.find("empty text"), std::string::npos);
}

TEST(MockPromptCache, TheEngineReportsCacheUsageAndRefusesTooManyBreakpoints) {
  auto script = parse_script(
      "defaults: {prompt_cache: true, usage: {output_tokens: 7}}\n"
      "rules:\n  - reply: {text: ok}\n",
      "t.yml");
  ASSERT_TRUE(script.ok());
  Engine engine(std::move(script).value(), {});
  auto request = [](const Json& b) {
    HttpRequest r;
    r.method = "POST";
    r.target = "/v1/messages";
    r.headers.items = {{"anthropic-version", "2026-10-21"},
                       {"x-api-key", "k"},
                       {"content-type", "application/json"}};
    r.body = b.dump();
    return r;
  };
  ResponsePlan first = engine.handle(request(body(1)));
  ASSERT_EQ(first.status, 200) << first.body;
  Json u1 = Json::parse(first.body)["usage"];
  EXPECT_GT(u1["cache_creation_input_tokens"].get<int>(), 2000);
  EXPECT_EQ(u1["output_tokens"], 7);
  ResponsePlan again = engine.handle(request(body(1)));
  EXPECT_EQ(Json::parse(again.body)["usage"]["cache_read_input_tokens"],
            u1["cache_creation_input_tokens"]);
  Json five = body(3);
  for (int i : {0, 1, 3})
    five["messages"][i]["content"][0]["cache_control"] = {{"type", "ephemeral"}};
  EXPECT_EQ(engine.handle(request(five)).status, 400);
}

}  // namespace
}  // namespace loopr::mock_llm
