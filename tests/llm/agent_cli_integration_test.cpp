// The codex and gemini providers (issue 46) with fake CLIs written by the test: what loopr runs
// (arguments, environment, the private configuration folder it writes), how their JSON lines
// become the answer and the transcript (messages, commands and their output, usage), and how
// their failures are classified. The real CLIs: agent_cli_e2e_test.cpp.
#include <gtest/gtest.h>

#include <loopr/core/loop.hpp>

#include "llm/login_refresh.hpp"
#include "security/token_server.hpp"
#include "support/fake_agent_cli.hpp"
#include "support/subprocess.hpp"

using namespace loopr;
using namespace loopr::llm;
using namespace loopr::llm::testing;

namespace {

using loopr::testing::jwt_until;

std::string codex_login(const std::string& jwt, const std::string& rt) {
  return "{\"OPENAI_API_KEY\":null,\"tokens\":{\"id_token\":\"" + jwt + "\",\"access_token\":\"" +
         jwt + "\",\"refresh_token\":\"" + rt + "\"},\"last_refresh\":\"2026-11-01T00:00:00Z\"}";
}

class AgentCliTest : public FakeAgentCliTest {
 protected:
  AgentCliTest() : FakeAgentCliTest("loopr-agent-cli") {}
  loopr::testing::TempDir home{"loopr-home"};

  /// A fake CLI that also keeps a copy of the private configuration loopr wrote for it.
  std::string fake(const std::string& name, const std::string& body) {
    std::string d = loopr::testing::shell_quote(dir.str());
    return write_fake_cli(name, "[ -n \"$CODEX_HOME\" ] && cp \"$CODEX_HOME/config.toml\" " + d +
                                    "/config.toml\n[ -n \"$GEMINI_CLI_HOME\" ] && cp "
                                    "\"$GEMINI_CLI_HOME/.gemini/settings.json\" " +
                                    d + "/settings.json\n" + body);
  }

  Config config(const std::string& provider, const std::string& command) {
    Config c;
    c.llm.provider = provider;
    c.llm.model = "claude-sonnet-5-5";  // the default: not passed to another vendor's CLI
    c.llm.base_url = "http://127.0.0.1:9";
    c.llm.codex.command = command;
    c.llm.codex.model = "gpt-9-codex";
    c.llm.codex.reasoning_effort = "high";
    c.llm.gemini.command = command;
    c.llm.gemini.model = "gemini-9-pro";
    c.pricing["gpt-9-codex"] = Price{1.0, 10.0, 0.0, 0.1};
    return c;
  }

  Request request() { return code_request("Implement the phase.", "Say \"done\"\nwhen done."); }

  EnvLookup env(std::map<std::string, std::string> vars) {
    vars["HOME"] = home.str();
    return env_with(vars);
  }
};

const char* kCodexRun = R"(cat <<'EOF'
{"type":"thread.started","thread_id":"0199-thread"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Looking**"}}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'make test'","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'make test'","aggregated_output":"1 failed\n","exit_code":2,"status":"failed"}}
{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"src/a.c","kind":"update"}],"status":"completed"}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Fixed the test."}}
{"type":"turn.completed","usage":{"input_tokens":12000,"cached_input_tokens":10000,"output_tokens":500}}
EOF
)";

}  // namespace

TEST_F(AgentCliTest, CodexRunIsParsedIntoAnswerTranscriptUsageAndCost) {
  std::string codex = fake("codex", kCodexRun);
  ClientHarness h(config("codex", codex), env({{"OPENAI_API_KEY", "sk-openai-secret"}}));
  ASSERT_TRUE(h.client->runs_own_tools());
  EXPECT_EQ(h.client->provider(), "codex");
  Outcome o = h.call(request());
  ASSERT_TRUE(o.ok()) << o.error().describe();
  const Response& r = o.response();
  EXPECT_EQ(r.text(), "Fixed the test.");
  EXPECT_EQ(r.stop_reason, StopReason::end_turn);
  EXPECT_EQ(r.id, "0199-thread");
  EXPECT_EQ(r.model, "gpt-9-codex");
  EXPECT_EQ(r.usage.input_tokens, 2000);
  EXPECT_EQ(r.usage.cache_read_tokens, 10000);
  EXPECT_EQ(r.usage.output_tokens, 500);
  EXPECT_NEAR(r.usage.cost_usd, (2000 * 1.0 + 500 * 10.0 + 10000 * 0.1) / 1e6, 1e-12);
  // The transcript: the command with its output (failed), the patch and its result, the message.
  ASSERT_EQ(r.transcript.size(), 5u);
  const ContentBlock& cmd = r.transcript[0].content.at(0);
  EXPECT_EQ(cmd.type, ContentBlock::Type::tool_use);
  EXPECT_EQ(cmd.name, "shell");
  EXPECT_EQ(cmd.input["command"], "bash -lc 'make test'");
  const ContentBlock& out = r.transcript[1].content.at(0);
  EXPECT_EQ(out.type, ContentBlock::Type::tool_result);
  EXPECT_EQ(out.text, "1 failed\n");
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(r.transcript[2].content.at(0).name, "apply_patch");
  EXPECT_EQ(r.transcript[4].content.at(0).text, "Fixed the test.");

  auto argv = lines("argv");
  std::vector<std::string> want = {"exec",
                                   "--json",
                                   "--ephemeral",
                                   "--skip-git-repo-check",
                                   "--dangerously-bypass-approvals-and-sandbox",
                                   "--color",
                                   "never",
                                   "--cd",
                                   worktree.str(),
                                   "--model",
                                   "gpt-9-codex",
                                   "--",
                                   "Implement the phase."};
  EXPECT_EQ(argv, want);
  std::string env_seen = loopr::testing::read_file(dir / "env");
  EXPECT_NE(env_seen.find("OPENAI_API_KEY=sk-openai-secret"), std::string::npos);
  EXPECT_EQ(env_seen.find("OPENAI_BASE_URL"), std::string::npos) << "in config.toml instead";
  EXPECT_NE(env_seen.find("CODEX_HOME="), std::string::npos);
  EXPECT_EQ(env_seen.find("CODEX_HOME=" + home.str()), std::string::npos);
  for (const auto& arg : argv) EXPECT_EQ(arg.find("sk-openai-secret"), std::string::npos);
  std::string toml = loopr::testing::read_file(dir / "config.toml");
  EXPECT_NE(toml.find("model_provider = \"loopr\""), std::string::npos) << toml;
  EXPECT_NE(toml.find("base_url = \"http://127.0.0.1:9/v1\""), std::string::npos) << toml;
  EXPECT_NE(toml.find("wire_api = \"responses\""), std::string::npos) << toml;
  EXPECT_NE(toml.find("\"x-loopr-loop-id\" = \"code-001-001-001\""), std::string::npos) << toml;
  EXPECT_NE(toml.find("model_reasoning_effort = \"high\""), std::string::npos) << toml;
  // The system text, escaped as a TOML string (a quote and a newline in it).
  EXPECT_NE(toml.find("developer_instructions = \"Say \\\"done\\\"\\nwhen done.\""),
            std::string::npos)
      << toml;
}

TEST_F(AgentCliTest, CodexFailuresAreClassified) {
  std::string codex = fake("codex",
                           "echo '{\"type\":\"thread.started\",\"thread_id\":\"t-9\"}'\n"
                           "echo '{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}'\n"
                           "echo '{\"type\":\"turn.failed\",\"error\":{\"message\":\"exceeded "
                           "retry limit, last status: 429 Too Many Requests\"}}'\nexit 1\n");
  ClientHarness h(config("codex", codex), env({}));
  Outcome o = h.call(request());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::rate_limited);
  EXPECT_TRUE(o.error().retryable);
  EXPECT_EQ(o.error().request_id, "t-9");

  std::string refused = fake("codex-401",
                             "echo '{\"type\":\"turn.failed\",\"error\":{\"message\":\"unexpected "
                             "status 401 Unauthorized: Incorrect API key\"}}'\nexit 1\n");
  ClientHarness h2(config("codex", refused), env({}));
  Outcome o2 = h2.call(request());
  ASSERT_FALSE(o2.ok());
  EXPECT_EQ(o2.error().kind, ErrorKind::auth);
  EXPECT_FALSE(o2.error().retryable);

  std::string silent = fake("codex-dies", "echo 'thread panicked' >&2\nexit 101\n");
  ClientHarness h3(config("codex", silent), env({}));
  Outcome o3 = h3.call(request());
  ASSERT_FALSE(o3.ok());
  EXPECT_EQ(o3.error().kind, ErrorKind::process);
  EXPECT_NE(o3.error().message.find("thread panicked"), std::string::npos) << o3.error().message;

  ClientHarness h4(config("codex", (dir / "no-such-codex").string()), env({}));
  Outcome o4 = h4.call(request());
  ASSERT_FALSE(o4.ok());
  EXPECT_NE(o4.error().message.find("llm.codex.command"), std::string::npos) << o4.error().message;
}

// A ChatGPT login of the person's (a JWT access token, valid for an hour): codex gets a copy
// with the access token and no refresh token; the person's configuration is never its.
TEST_F(AgentCliTest, CodexUsesACopyOfTheLoginWithoutItsRefreshTokenWhenNoKeyIsSet) {
  const std::string login = codex_login(jwt_until(std::time(nullptr) + 3600), "rt-SECRET");
  loopr::testing::write_file(home / ".codex/auth.json", login);
  loopr::testing::write_file(home / ".codex/config.toml", "notify = [\"evil\"]\n");
  std::string codex =
      fake("codex", std::string("cat \"$CODEX_HOME/auth.json\" > ") +
                        loopr::testing::shell_quote(dir.str()) + "/auth\n" + kCodexRun);
  Config c = config("codex", codex);
  c.llm.base_url.clear();
  ClientHarness h(c, env({}));
  ASSERT_TRUE(h.call(request()).ok());
  auto copy = nlohmann::json::parse(loopr::testing::read_file(dir / "auth"));
  EXPECT_EQ(copy["tokens"]["access_token"], nlohmann::json::parse(login)["tokens"]["access_token"]);
  EXPECT_EQ(copy["tokens"]["refresh_token"], "") << copy.dump();
  EXPECT_EQ(copy.dump().find("rt-SECRET"), std::string::npos);
  std::string toml = loopr::testing::read_file(dir / "config.toml");
  EXPECT_EQ(toml.find("evil"), std::string::npos) << toml;
  EXPECT_EQ(toml.find("model_provider"), std::string::npos) << "codex's own provider: " << toml;
  EXPECT_EQ(loopr::testing::read_file(home / ".codex/auth.json"), login);
}

// On a ChatGPT login (no key) loopr refreshes an expired login itself (at the mock token
// endpoint LOOPR_LOGIN_TOKEN_URL names) before codex starts; a login codex writes into its copy
// is never taken back; and the run's cost is notional: a receipt, counted only under
// limits.count_subscription_cost.
TEST_F(AgentCliTest, CodexOnALoginIsRefreshedByLooprNeverFromItsCopyAndItsCostIsNotional) {
  loopr::testing::TokenServer tokens("rt-0", 3600);
  for (bool counted : {false, true}) {
    const std::string rt = counted ? tokens.latest_refresh_token() : "rt-0";
    loopr::testing::write_file(home / ".codex/auth.json", codex_login(jwt_until(100), rt));
    std::string codex =
        fake("codex", "printf '%s' '" + codex_login(jwt_until(4102444800), "rt-planted") +
                          "' > \"$CODEX_HOME/auth.json\"\n" + kCodexRun);
    Config c = config("codex", codex);
    c.llm.base_url.clear();
    c.limits.count_subscription_cost = counted;
    ClientHarness h(c, env({{"LOOPR_LOGIN_TOKEN_URL", tokens.url()}}));
    Outcome o = h.call(request());
    ASSERT_TRUE(o.ok()) << o.error().describe();
    const double priced = (2000 * 1.0 + 500 * 10.0 + 10000 * 0.1) / 1e6;
    ASSERT_TRUE(o.response().notional_cost_usd.has_value());
    EXPECT_NEAR(*o.response().notional_cost_usd, priced, 1e-12);
    EXPECT_NEAR(o.response().usage.cost_usd, counted ? priced : 0.0, 1e-12);
    auto kept = nlohmann::json::parse(loopr::testing::read_file(home / ".codex/auth.json"));
    EXPECT_EQ(kept["tokens"]["refresh_token"], tokens.latest_refresh_token()) << kept.dump();
    EXPECT_EQ(kept["tokens"]["access_token"], "at-" + std::to_string(tokens.refreshes()));
    EXPECT_EQ(kept.dump().find("planted"), std::string::npos) << "the copy is never read back";
    EXPECT_TRUE(kept["OPENAI_API_KEY"].is_null());
  }
  EXPECT_EQ(tokens.refreshes(), 2);
  EXPECT_EQ(tokens.reused(), 0);
  // A refused refresh: no command, a clear error that is not retried.
  loopr::testing::write_file(home / ".codex/auth.json", codex_login(jwt_until(100), "rt-gone"));
  std::string never =
      fake("codex", "touch " + loopr::testing::shell_quote(dir.str()) + "/ran\n" + kCodexRun);
  Config c = config("codex", never);
  c.llm.base_url.clear();
  ClientHarness refused(c, env({{"LOOPR_LOGIN_TOKEN_URL", tokens.url()}}));
  Outcome failed = refused.call(request());
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, ErrorKind::auth);
  EXPECT_FALSE(failed.error().retryable);
  EXPECT_NE(failed.error().message.find("loopr: the codex login could not be refreshed ("),
            std::string::npos)
      << failed.error().message;
  EXPECT_NE(failed.error().message.find("(log in again with `codex`, or set an API key)"),
            std::string::npos)
      << failed.error().message;
  EXPECT_FALSE(std::filesystem::exists(dir / "ran")) << "no command starts";
  // With a key: no login, a real cost.
  std::string codex = fake("codex", kCodexRun);
  ClientHarness keyed(config("codex", codex), env({{"OPENAI_API_KEY", "sk-openai-secret"}}));
  Outcome o = keyed.call(request());
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o.response().notional_cost_usd.has_value());
  EXPECT_GT(o.response().usage.cost_usd, 0);
}

TEST_F(AgentCliTest, GeminiRunIsParsedIntoAnswerTranscriptAndUsage) {
  std::string gemini =
      fake("gemini", "printf '%s' \"$2\" > " + loopr::testing::shell_quote(dir.str()) +
                         "/prompt\n" + R"(cat <<'EOF'
{"type":"init","timestamp":"2026-11-28T10:00:00Z","session_id":"g-1","model":"gemini-9-pro"}
{"type":"message","role":"user","content":"Implement the phase."}
{"type":"message","role":"assistant","content":"Let me ","delta":true}
{"type":"message","role":"assistant","content":"look.","delta":true}
{"type":"tool_use","tool_name":"run_shell_command","tool_id":"c-1","parameters":{"command":"ls"}}
{"type":"tool_result","tool_id":"c-1","status":"success","output":"a.c"}
{"type":"message","role":"assistant","content":"All done.","delta":true}
{"type":"result","status":"success","stats":{"total_tokens":950,"input_tokens":900,"output_tokens":50,"cached":600,"input":300,"duration_ms":10,"tool_calls":1}}
EOF
)");
  ClientHarness h(config("gemini", gemini), env({{"GEMINI_API_KEY", "AIza-secret"}}));
  EXPECT_EQ(h.client->provider(), "gemini");
  Outcome o = h.call(request());
  ASSERT_TRUE(o.ok()) << o.error().describe();
  const Response& r = o.response();
  EXPECT_EQ(r.text(), "All done.");
  EXPECT_EQ(r.model, "gemini-9-pro");
  EXPECT_EQ(r.id, "g-1");
  EXPECT_EQ(r.usage.input_tokens, 300);
  EXPECT_EQ(r.usage.cache_read_tokens, 600);
  EXPECT_EQ(r.usage.output_tokens, 50);
  ASSERT_EQ(r.transcript.size(), 3u);
  EXPECT_EQ(r.transcript[0].content.at(0).text, "Let me look.");
  EXPECT_EQ(r.transcript[0].content.at(1).name, "run_shell_command");
  EXPECT_EQ(r.transcript[1].content.at(0).text, "a.c");

  auto argv = lines("argv");
  ASSERT_GE(argv.size(), 2u);
  EXPECT_EQ(argv[0], "--prompt");
  // No flag appends to gemini's system prompt: loopr's system text leads the prompt.
  EXPECT_EQ(loopr::testing::read_file(dir / "prompt"),
            "Say \"done\"\nwhen done.\n\nImplement the phase.");
  for (const char* want : {"stream-json", "yolo", "gemini-9-pro"})
    EXPECT_NE(std::find(argv.begin(), argv.end(), want), argv.end()) << want;
  std::string env_seen = loopr::testing::read_file(dir / "env");
  EXPECT_NE(env_seen.find("GEMINI_API_KEY=AIza-secret"), std::string::npos);
  EXPECT_NE(env_seen.find("GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9"), std::string::npos);
  EXPECT_NE(env_seen.find("GEMINI_SANDBOX=false"), std::string::npos);
  EXPECT_NE(env_seen.find("GEMINI_CLI_CUSTOM_HEADERS=x-loopr-loop-id: code-001-001-001, "
                          "x-loopr-loop-type: code"),
            std::string::npos);
  EXPECT_EQ(env_seen.find("GEMINI_CLI_HOME=" + home.str()), std::string::npos);
  std::string settings = loopr::testing::read_file(dir / "settings.json");
  EXPECT_NE(settings.find("\"selectedType\": \"gemini-api-key\""), std::string::npos) << settings;
}

TEST_F(AgentCliTest, GeminiFailuresAreClassified) {
  std::string gemini = fake(
      "gemini",
      "echo '{\"type\":\"init\",\"session_id\":\"g-2\",\"model\":\"gemini-9-pro\"}'\n"
      "echo '{\"type\":\"result\",\"status\":\"error\",\"error\":{\"type\":\"Error\",\"message\":"
      "\"[API Error: 429 RESOURCE_EXHAUSTED quota]\"}}'\nexit 1\n");
  ClientHarness h(config("gemini", gemini), env({}));
  Outcome o = h.call(request());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::rate_limited);
  EXPECT_EQ(o.error().request_id, "g-2");

  std::string quiet = fake("gemini-x", "echo 'Error when talking to Gemini API' >&2\nexit 1\n");
  ClientHarness h2(config("gemini", quiet), env({}));
  Outcome o2 = h2.call(request());
  ASSERT_FALSE(o2.ok());
  EXPECT_NE(o2.error().message.find("without a result"), std::string::npos) << o2.error().message;
}

// The real codex (tests/agent_clis) runs on the copy of a ChatGPT login loopr gives a command
// (login_copy: the access token, an empty refresh token, last_refresh now): against mock-llm's
// Responses API through a provider that takes the ChatGPT login, it answers with the account of
// the login and never tries to refresh. Without the pinned CLI installed the test skips.
TEST_F(AgentCliTest, TheRealCodexRunsOnTheLoginCopyLooprGivesIt) {
  const std::filesystem::path codex =
      std::filesystem::path(LOOPR_SOURCE_DIR) / "tests/agent_clis/node_modules/.bin/codex";
  if (!std::filesystem::exists(codex))
    GTEST_SKIP() << "the codex CLI is not installed (tools/install-deps.sh: tests/agent_clis)";
  LOOPR_REQUIRE_MOCK();
  MockLlm mock(
      "defaults:\n  model: gpt-9-codex\nrules:\n  - name: hi\n    match: {api: "
      "responses}\n    reply: {text: \"Hello from the mock.\"}\n");
  const std::string jwt = jwt_until(std::time(nullptr) + 3600);
  nlohmann::json person = nlohmann::json::parse(codex_login(jwt, "rt-PERSON"));
  person["tokens"]["account_id"] = "acc-1";
  const auto copy = login_copy("codex", person, loopr::now_ms());
  ASSERT_EQ(copy.dump().find("rt-PERSON"), std::string::npos);
  loopr::testing::write_file(dir / "codex-home/auth.json", copy.dump());
  loopr::testing::write_file(dir / "codex-home/config.toml",
                             "model_provider = \"mock\"\ncheck_for_update_on_startup = false\n"
                             "[model_providers.mock]\nname = \"mock\"\nbase_url = \"" +
                                 mock.url() +
                                 "/v1\"\nwire_api = \"responses\"\nrequires_openai_auth = true\n");
  auto run = loopr::testing::run_command(
      "CODEX_HOME=" + loopr::testing::shell_quote((dir / "codex-home").string()) +
      " HOME=" + loopr::testing::shell_quote(home.str()) + " timeout 120 " +
      loopr::testing::shell_quote(codex.string()) +
      " exec --skip-git-repo-check --json -m gpt-9-codex 'say hi' 2>&1");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("Hello from the mock."), std::string::npos) << run.output;
  bool answered = false;
  for (const auto& r : mock.requests())
    if (r["path"] == "/v1/responses") {
      answered = true;
      EXPECT_EQ(r["headers"]["chatgpt-account-id"], "acc-1") << r.dump().substr(0, 600);
    }
  EXPECT_TRUE(answered);
  auto after = nlohmann::json::parse(loopr::testing::read_file(dir / "codex-home/auth.json"));
  EXPECT_EQ(after["tokens"]["access_token"], jwt) << "codex kept the token it was given";
}
