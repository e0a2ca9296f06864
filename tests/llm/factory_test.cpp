#include <gtest/gtest.h>

#include <loopr/llm/client.hpp>
#include <loopr/llm/retry.hpp>

using namespace loopr;
using namespace loopr::llm;

namespace {

struct Made {
  net::io_context io;
  net::thread_pool pool{1};
  Result<std::unique_ptr<LlmClient>> client = make_error(ErrorCode::internal, "not made");
  explicit Made(const Config& c) {
    client = make_client(
        c, [](const char*) -> std::optional<std::string> { return "k"; }, io, pool);
  }
  ~Made() { pool.join(); }
};

}  // namespace

TEST(ClientFactoryTest, BuildsEachProvider) {
  Config c;  // anthropic at https://api.anthropic.com by default; nothing connects yet
  Made anthropic(c);
  ASSERT_TRUE(anthropic.client.ok()) << anthropic.client.error().message;
  EXPECT_EQ((*anthropic.client)->provider(), "anthropic");
  EXPECT_EQ((*anthropic.client)->model(), "claude-sonnet-5-5");
  EXPECT_FALSE((*anthropic.client)->runs_own_tools());

  c.llm.provider = "openai";
  c.llm.model = "gpt-9";
  Made openai(c);
  ASSERT_TRUE(openai.client.ok());
  EXPECT_EQ((*openai.client)->provider(), "openai");
  EXPECT_FALSE((*openai.client)->runs_own_tools());

  c.llm.provider = "claude-code";
  Made cli(c);
  ASSERT_TRUE(cli.client.ok());
  EXPECT_EQ((*cli.client)->provider(), "claude-code");
  EXPECT_TRUE((*cli.client)->runs_own_tools());  // the engine skips its tool loop

  // Issue 46: the Responses API (loopr's tool loop), Codex CLI and Gemini CLI (their own).
  c.llm.model = "gpt-9";
  for (const char* name : {"openai-responses", "codex", "gemini"}) {
    c.llm.provider = name;
    Made made(c);
    ASSERT_TRUE(made.client.ok()) << name << ": " << made.client.error().message;
    EXPECT_EQ((*made.client)->provider(), name);
    EXPECT_EQ((*made.client)->runs_own_tools(), std::string(name) != "openai-responses") << name;
  }
}

TEST(ClientFactoryTest, RefusesUnknownProviderAndClearTextToOtherHosts) {
  Config c;
  c.llm.provider = "bard";
  Made unknown(c);
  ASSERT_FALSE(unknown.client.ok());
  EXPECT_NE(unknown.client.error().message.find("llm.provider 'bard'"), std::string::npos);

  c.llm.provider = "openai";
  c.llm.base_url = "http://gpu-box.lan:8000";
  Made plain(c);
  ASSERT_FALSE(plain.client.ok());
  EXPECT_NE(plain.client.error().message.find("clear text"), std::string::npos);
}

TEST(ClientFactoryTest, RetryPolicyFollowsTheConfig) {
  LlmConfig c;
  c.max_retries = 3;
  EXPECT_EQ(retry_policy(c).max_retries, 3);
  c.max_retries = -1;
  EXPECT_EQ(retry_policy(c).max_retries, 0);
}
