// The agent-CLI and Responses API providers' keys (issue 46): `llm.codex`, `llm.gemini`, the new
// provider names, and which base-URL variable each provider reads.
#include <gtest/gtest.h>

#include <map>

#include <loopr/core/config.hpp>

#include "support/command_env.hpp"
#include "support/config_errors.hpp"

using namespace loopr;

using loopr::testing::fake_env;

TEST(ConfigProvidersTest, CodexAndGeminiKeys) {
  auto r = parse_config(R"(
llm:
  provider: codex
  codex: {command: /opt/codex, model: gpt-9-codex, reasoning_effort: high, allowed_hosts: [auth.openai.com]}
  gemini: {command: gem, model: gemini-9-pro, allowed_hosts: ["oauth2.googleapis.com:443"]}
)",
                        "x.yml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->llm.provider, "codex");
  EXPECT_EQ(r->llm.codex.command, "/opt/codex");
  EXPECT_EQ(r->llm.codex.model, "gpt-9-codex");
  EXPECT_EQ(r->llm.codex.reasoning_effort, "high");
  EXPECT_EQ(r->llm.codex.allowed_hosts, std::vector<std::string>{"auth.openai.com"});
  EXPECT_EQ(r->llm.gemini.command, "gem");
  EXPECT_EQ(r->llm.gemini.model, "gemini-9-pro");
  EXPECT_EQ(r->llm.gemini.allowed_hosts.size(), 1u);
  EXPECT_EQ(r->llm.model, "claude-sonnet-5-5");  // llm.model is its own key

  Config defaults;
  EXPECT_EQ(defaults.llm.codex.command, "codex");
  EXPECT_EQ(defaults.llm.gemini.command, "gemini");
  EXPECT_TRUE(defaults.llm.codex.model.empty());
}

TEST(ConfigProvidersTest, UnknownValuesAndKeysAreErrorsNamingThem) {
  EXPECT_NE(loopr::testing::config_error_of("llm:\n  codex: {reasoning_effort: huge}\n")
                .find("llm.codex.reasoning_effort"),
            std::string::npos);
  EXPECT_NE(
      loopr::testing::config_error_of("llm:\n  gemini: {sandbox: true}\n").find("llm.gemini.sandbox"),
      std::string::npos);
  auto bad = loopr::testing::config_error_of("llm:\n  provider: codex-cli\n");
  EXPECT_NE(bad.find("openai-responses"), std::string::npos) << bad;
  for (const char* p : {"openai-responses", "codex", "gemini"})
    EXPECT_TRUE(parse_config(std::string("llm:\n  provider: ") + p + "\n", "x.yml").ok()) << p;
}

TEST(ConfigProvidersTest, EachProviderReadsItsOwnBaseUrlVariable) {
  auto env = fake_env({{"OPENAI_BASE_URL", "http://127.0.0.1:1"},
                       {"GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:2"},
                       {"ANTHROPIC_BASE_URL", "http://127.0.0.1:3"}});
  for (auto [provider, url] :
       std::map<std::string, std::string>{{"openai-responses", "http://127.0.0.1:1"},
                                          {"codex", "http://127.0.0.1:1"},
                                          {"gemini", "http://127.0.0.1:2"},
                                          {"claude-code", "http://127.0.0.1:3"}}) {
    Config c;
    c.llm.provider = provider;
    ASSERT_TRUE(apply_env(c, env).ok());
    EXPECT_EQ(c.llm.base_url, url) << provider;
  }
  Config c;
  ASSERT_TRUE(apply_env(c, fake_env({{"LOOPR_PROVIDER", "gemini"}})).ok());
  EXPECT_EQ(c.llm.provider, "gemini");
  EXPECT_FALSE(apply_env(c, fake_env({{"LOOPR_PROVIDER", "cursor"}})).ok());
}

TEST(ConfigProvidersTest, ALoopTypeMayNameAnyProviderAndAnAgentCliGetsItsOwnModel) {
  auto r = parse_config(R"(
llm:
  provider: anthropic
  codex: {model: gpt-9-codex}
loops:
  plan: {model: claude-opus-5-5}
  code: {provider: codex}
  spec: {provider: gemini}
  phase: {provider: openai-responses, model: gpt-9}
)",
                        "x.yml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->provider_for("code"), "codex");
  EXPECT_EQ(r->provider_for("plan"), "anthropic");
  // An agent CLI's type without a model of its own asks for the CLI's (llm.codex.model), and
  // never for llm.model's Claude default, which that CLI would refuse (gemini: its default).
  EXPECT_EQ(r->model_for("code"), "gpt-9-codex");
  EXPECT_EQ(r->model_for("spec"), "");
  EXPECT_EQ(r->model_for("phase"), "gpt-9");
  EXPECT_EQ(r->model_for("plan"), "claude-opus-5-5");
  EXPECT_EQ(r->model_for("review"), "claude-sonnet-5-5");
  Config c;
  c.llm.provider = "gemini";
  c.llm.model = "gemini-9-flash";  // not a Claude model: the CLI gets it
  EXPECT_EQ(c.model_for("code"), "gemini-9-flash");
}

TEST(ConfigProvidersTest, ToolsOfATypeAnAgentCliRunsAreRefusedNotIgnored) {
  auto r = parse_config("llm:\n  provider: codex\nloops:\n  code: {tools: [read_file]}\n", "x.yml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto refused = check_cli_tools(*r, "x.yml");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("loops.code.tools"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("codex"), std::string::npos) << refused.error().message;
  // The same key on a type loopr drives itself is fine.
  auto mixed = parse_config(
      "llm:\n  provider: codex\nloops:\n  code: {provider: anthropic, tools: [read_file]}\n",
      "x.yml");
  ASSERT_TRUE(mixed.ok()) << mixed.error().message;
  EXPECT_TRUE(check_cli_tools(*mixed, "x.yml").ok());
}
