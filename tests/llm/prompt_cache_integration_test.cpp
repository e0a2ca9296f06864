// Prompt caching and the choice of provider per loop type, over loopback against the real
// loopr-mock-llm: the turns of one conversation read what the turn before wrote (the mock
// emulates the cache by Anthropic's rules and reports it as the API does), cost is priced with
// the cache; a request for another provider (loops.<type>.provider) reaches that provider's API.
#include <gtest/gtest.h>

#include "llm/prompt_cache.hpp"
#include "llm/providers.hpp"
#include "support/llm_wire_fixture.hpp"

// In the fixture's namespace: the suite uses its helpers and the llm types unqualified.
namespace loopr::llm::testing {

using nlohmann::json;

namespace {

const char* kScript = R"(
defaults:
  prompt_cache: true
  usage: {output_tokens: 10}
rules:
  - name: look
    match: {api: anthropic, turn: 1}
    reply:
      text: "Looking."
      tool_use: {name: read_file, input: {path: "a.txt"}}
  - name: look-again
    match: {api: anthropic, turn: 2}
    reply:
      tool_use: {name: read_file, input: {path: "b.txt"}}
  - name: done
    match: {api: anthropic}
    reply: {text: "Done."}
  - name: openai
    match: {api: openai}
    reply: {text: "From the OpenAI side."}
)";

Request opening() {
  Request r;
  r.system = std::string(6000, 's') + " fixed instructions";
  r.messages = {
      Message::user_text("# Code loop 001 (iteration 1 of 3)\n" + std::string(3000, 'p'))};
  r.tools = {{"read_file", "Reads a file", json{{"type", "object"}}}};
  r.loop_id = "code-001-001-001";
  r.loop_type = "code";
  r.working_dir = "/repo/.loopr/worktrees/code-001-001-001";
  return r;
}

}  // namespace

TEST(PromptCacheIntegrationTest, EachTurnReadsWhatTheTurnBeforeWrote) {
  LOOPR_REQUIRE_MOCK();
  MockLlm mock(kScript);
  Config c = mock_config("anthropic", mock.url());
  c.llm.model = "claude-sonnet-5-5";
  ClientHarness h(c, env_with({{"ANTHROPIC_API_KEY", "k"}}));
  Request r = opening();
  Outcome t1 = h.call(r);
  ASSERT_TRUE(t1.ok()) << t1.error().describe() << mock.output();
  EXPECT_EQ(t1.response().usage.cache_read_tokens, 0);
  EXPECT_GT(t1.response().usage.cache_write_tokens, 2000);
  answer_tools(r, t1.response(), std::string(2000, 'a'));
  Outcome t2 = h.call(r);
  ASSERT_TRUE(t2.ok()) << t2.error().describe();
  EXPECT_EQ(t2.response().usage.cache_read_tokens, t1.response().usage.cache_write_tokens);
  answer_tools(r, t2.response(), std::string(2000, 'b'));
  Outcome t3 = h.call(r);
  ASSERT_TRUE(t3.ok()) << t3.error().describe();
  const Usage& u3 = t3.response().usage;
  EXPECT_EQ(u3.cache_read_tokens,
            t2.response().usage.cache_read_tokens + t2.response().usage.cache_write_tokens);
  EXPECT_LT(u3.input_tokens + u3.cache_write_tokens, u3.cache_read_tokens / 4)
      << "the third turn pays full price only for what is new";
  // Priced with the cache: reads at $0.20, writes at $2.50 per MTok (claude-sonnet-5-5).
  EXPECT_NEAR(u3.cost_usd,
              (u3.input_tokens * 2.0 + u3.output_tokens * 10.0 + u3.cache_write_tokens * 2.5 +
               u3.cache_read_tokens * 0.2) /
                  1e6,
              1e-9);
  for (const auto& req : mock.requests()) {
    EXPECT_EQ(req["status"], 200) << req.dump();
    EXPECT_LE(count_cache_breakpoints(req["body"]), kMaxCacheBreakpoints);
  }
}

TEST(PromptCacheIntegrationTest, CacheOffWritesAndReadsNothing) {
  LOOPR_REQUIRE_MOCK();
  MockLlm mock(kScript);
  Config c = mock_config("anthropic", mock.url());
  c.llm.cache = false;
  ClientHarness h(c, env_with({{"ANTHROPIC_API_KEY", "k"}}));
  Request r = opening();
  Outcome t1 = h.call(r);
  ASSERT_TRUE(t1.ok()) << t1.error().describe();
  answer_tools(r, t1.response(), "x");
  Outcome t2 = h.call(r);
  ASSERT_TRUE(t2.ok()) << t2.error().describe();
  EXPECT_EQ(t2.response().usage.cache_read_tokens + t2.response().usage.cache_write_tokens, 0);
  EXPECT_GT(t2.response().usage.input_tokens, 2000);
}

TEST(PromptCacheIntegrationTest, ARequestForAnotherProviderReachesItsApi) {
  LOOPR_REQUIRE_MOCK();
  MockLlm mock(kScript);
  Config c = mock_config("anthropic", mock.url());
  c.loops[LoopType::plan].provider = "openai";
  ClientHarness h(c, env_with({{"ANTHROPIC_API_KEY", "k"}, {"OPENAI_API_KEY", "o"}}));
  EXPECT_EQ(h.client->provider(), "anthropic");
  EXPECT_EQ(h.client->for_provider("openai").provider(), "openai");
  EXPECT_EQ(h.client->for_provider("").provider(), "anthropic");
  Request plan = user_request("plan it", "001", "plan");
  plan.provider = c.provider_for("plan");
  plan.model = "gpt-9";
  plan.working_dir = "/repo/.loopr/worktrees/001";
  Outcome o = h.call(plan);
  ASSERT_TRUE(o.ok()) << o.error().describe() << mock.output();
  EXPECT_EQ(o.response().text(), "From the OpenAI side.");
  Request code = opening();
  code.provider = c.provider_for("code");
  ASSERT_TRUE(h.call(code).ok());
  auto log = mock.requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["path"], "/v1/chat/completions");
  EXPECT_EQ(log[0]["body"]["prompt_cache_key"],
            prompt_cache_key("/repo/.loopr/worktrees/001", "001"));
  EXPECT_EQ(log[1]["path"], "/v1/messages");
}

}  // namespace loopr::llm::testing
