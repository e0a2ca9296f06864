// The claude-code provider with fake `claude` executables written by the test: one replays the
// recorded stream-json, others fail, hang or end without a result.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "support/fake_agent_cli.hpp"
#include "support/subprocess.hpp"

using namespace loopr;
using namespace loopr::llm;
using namespace loopr::llm::testing;
using namespace std::chrono_literals;

namespace {

class ClaudeCodeTest : public FakeAgentCliTest {
 protected:
  ClaudeCodeTest() : FakeAgentCliTest("loopr-claude") {}

  std::string fake_claude(const std::string& body) { return write_fake_cli("claude", body); }

  Config config(const std::string& command, bool skip_permissions = false) {
    Config c;
    c.llm.provider = "claude-code";
    c.llm.model = "claude-opus-5-5";
    c.llm.claude_code.command = command;
    c.llm.claude_code.skip_permissions = skip_permissions;
    c.llm.claude_code.max_turns = 30;
    c.llm.claude_code.permission_mode = "acceptEdits";
    return c;
  }

  Request request(const std::string& prompt = "Implement the phase.") {
    return code_request(prompt, "");
  }

  static std::string fixture_path() {
    return std::string(LOOPR_SOURCE_DIR) + "/tests/llm/fixtures/claude-code-2.1.329-stream.jsonl";
  }
};

/// True once `pid` is gone (or a zombie nobody reaps in this container).
bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

}  // namespace

TEST_F(ClaudeCodeTest, ReplaysRecordedStreamJsonIntoAResponse) {
  std::string claude = fake_claude("cat " + loopr::testing::shell_quote(fixture_path()) + "\n");
  ClientHarness h(config(claude), env_with({{"ANTHROPIC_API_KEY", "sk-ant-secret"}}));
  ASSERT_TRUE(h.client->runs_own_tools());
  Outcome o = h.call(request());
  ASSERT_TRUE(o.ok()) << o.error().describe();
  const Response& r = o.response();
  EXPECT_EQ(r.text(), "Hello from the fake.");
  EXPECT_EQ(r.stop_reason, StopReason::end_turn);
  EXPECT_EQ(r.usage.input_tokens, 12449);
  EXPECT_EQ(r.usage.output_tokens, 52);
  EXPECT_DOUBLE_EQ(r.usage.cost_usd, 0.050836);
  EXPECT_EQ(r.model, "claude-opus-5-5");
  EXPECT_EQ(r.id, "88dde19f-68a0-4123-bae6-d8f778c8987c");

  EXPECT_EQ(lines("argv"),
            (std::vector<std::string>{"-p", "Implement the phase.", "--output-format",
                                      "stream-json", "--verbose", "--model", "claude-opus-5-5",
                                      "--max-turns", "30", "--permission-mode", "acceptEdits"}));
  EXPECT_EQ(lines("cwd").at(0), std::filesystem::canonical(worktree.path()).string());
  std::string env = loopr::testing::read_file(dir / "env");
  EXPECT_NE(env.find("ANTHROPIC_API_KEY=sk-ant-secret"), std::string::npos);
  EXPECT_NE(env.find("x-loopr-loop-id: code-001-001-001"), std::string::npos);
  for (const auto& arg : lines("argv")) EXPECT_EQ(arg.find("sk-ant-secret"), std::string::npos);
}

TEST_F(ClaudeCodeTest, SkipPermissionsAndSystemTextOnlyWhenAsked) {
  std::string claude = fake_claude("cat " + loopr::testing::shell_quote(fixture_path()) + "\n");
  ClientHarness h(config(claude, true), env_with({}));
  Request r = request();
  r.system = "Be brief.";
  ASSERT_TRUE(h.call(r).ok());
  auto argv = lines("argv");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--dangerously-skip-permissions"), argv.end());
  auto sys = std::find(argv.begin(), argv.end(), "--append-system-prompt");
  ASSERT_NE(sys, argv.end());
  EXPECT_EQ(*(sys + 1), "Be brief.");
  EXPECT_EQ(loopr::testing::read_file(dir / "env").find("ANTHROPIC_API_KEY="), std::string::npos);
}

TEST_F(ClaudeCodeTest, ErrorResultIsAnErrorEvenWhenItSaysSuccess) {
  std::string claude = fake_claude(
      "echo "
      "'{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-9\",\"model\":\"claude-opus-5-"
      "5\"}'\n"
      "echo "
      "'{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":401,"
      "\"result\":\"Invalid API key\",\"session_id\":\"s-9\"}'\n"
      "echo 'Error: auth' >&2\nexit 1\n");
  ClientHarness h(config(claude), env_with({}));
  Outcome o = h.call(request());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::auth);
  EXPECT_FALSE(o.error().retryable);
  EXPECT_EQ(o.error().message,
            "ANTHROPIC_API_KEY is missing or was refused (401): Invalid API key");
  EXPECT_EQ(o.error().request_id, "s-9");
}

TEST_F(ClaudeCodeTest, ExitWithoutResultIsAFailure) {
  std::string claude = fake_claude("head -n 2 " + loopr::testing::shell_quote(fixture_path()) +
                                   "\n"
                                   "echo 'claude: lost the connection' >&2\n");
  ClientHarness h(config(claude), env_with({}));
  Outcome o = h.call(request());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::process);
  EXPECT_EQ(o.error().message,
            "claude exited with status 0 without a result line: claude: lost the connection");
}

TEST_F(ClaudeCodeTest, TimeoutKillsTheWholeProcessGroup) {
  std::string pidfile = (dir / "grandchild.pid").string();
  std::string claude = fake_claude(
      "echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}'\n"
      "sleep 600 &\necho $! > " +
      loopr::testing::shell_quote(pidfile) + "\nwait\n");
  ClientHarness h(config(claude), env_with({}));
  Request r = request();
  r.timeout = 500ms;
  auto start = std::chrono::steady_clock::now();
  Outcome o = h.call(r);
  ASSERT_FALSE(o.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
  EXPECT_EQ(o.error().kind, ErrorKind::timeout);
  pid_t grandchild = std::stoi(loopr::testing::read_file(pidfile));
  EXPECT_TRUE(loopr::testing::wait_until([&] { return process_gone(grandchild); }))
      << "the CLI's child survived the timeout";
}

TEST_F(ClaudeCodeTest, CancelStopsARunningCli) {
  std::string started = (dir / "started").string();
  std::string claude =
      fake_claude("touch " + loopr::testing::shell_quote(started) + "\nexec sleep 600\n");
  ClientHarness h(config(claude), env_with({}));
  std::atomic<bool> cancel{false};
  Request r = request();
  r.cancel = &cancel;
  std::thread canceller([&] {
    loopr::testing::wait_until([&] { return std::filesystem::exists(started); }, 30s);
    cancel = true;
  });
  Outcome o = h.call(r);
  canceller.join();
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::cancelled);
}

TEST_F(ClaudeCodeTest, MissingCliIsAClearFatalError) {
  ClientHarness h(config((dir / "no-such-claude").string()), env_with({}));
  Outcome o = h.call(request());
  ASSERT_FALSE(o.ok());
  EXPECT_FALSE(o.error().retryable);
  EXPECT_NE(o.error().message.find("llm.claude_code.command"), std::string::npos)
      << o.error().message;
}

TEST_F(ClaudeCodeTest, MoreThanOneMessageIsRefused) {
  std::string claude = fake_claude("cat " + loopr::testing::shell_quote(fixture_path()) + "\n");
  ClientHarness h(config(claude), env_with({}));
  Request r = request();
  r.messages.push_back(Message{Role::assistant, {ContentBlock::make_text("x")}});
  r.messages.push_back(Message::user_text("y"));
  Outcome o = h.call(r);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::invalid_request);
  EXPECT_FALSE(std::filesystem::exists(dir / "argv"));  // the CLI never ran
}

// The CLI under the sandbox the daemon gives it: the worktree writable, no network, the home
// hidden (the person's ~/.claude too), a private configuration folder seeded with only the
// account (with a key, no copy of the login at all), only the variables it needs.
TEST_F(ClaudeCodeTest, InTheSandboxTheCliSeesItsWorktreeAndAPrivateConfigButNotTheHome) {
  loopr::testing::TempDir home_dir{"loopr-claude-home"};
  std::filesystem::path home = std::filesystem::canonical(home_dir.path());
  loopr::testing::write_file(home / ".ssh/id_rsa", "SECRET-SSH\n");
  loopr::testing::write_file(home / ".claude/settings.json", "{\"hooks\":\"the person's\"}\n");
  loopr::testing::write_file(home / ".claude/.credentials.json", "{\"token\":\"LOGIN\"}\n");
  loopr::testing::write_file(
      home / ".claude.json",
      "{\"userID\":\"u1\",\"mcpServers\":{\"x\":{\"command\":\"evil\"}},\"projects\":{}}\n");
  // Its answer comes from the worktree: the sandbox hides /tmp, where a checkout may live.
  std::filesystem::copy_file(fixture_path(), worktree / "reply.jsonl");
  // Records into its working folder: the only place (with ~/.claude) it may write.
  std::string body =
      "env > env.txt\npwd > cwd.txt\ncat ~/.ssh/id_rsa > ssh.txt 2>&1\n"
      "mkdir -p ~/.claude; echo hook > ~/.claude/settings.json\n"
      "cat ~/.claude.json > home-config.txt 2>&1\n"
      "cat \"$CLAUDE_CONFIG_DIR/.claude.json\" \"$CLAUDE_CONFIG_DIR/.credentials.json\" > "
      "private.txt\n"
      "echo state > \"$CLAUDE_CONFIG_DIR/touched\"\n"
      "cat " +
      loopr::testing::shell_quote((worktree / "reply.jsonl").string()) + "\n";
  std::string path = write_executable("claude", "#!/bin/sh\n" + body);
  auto vars = std::map<std::string, std::string>{{"HOME", home.string()},
                                                 {"PATH", "/usr/bin:/bin"},
                                                 {"ANTHROPIC_API_KEY", "sk-ant-secret"},
                                                 {"GITHUB_TOKEN", "ghp-x"}};
  EnvLookup env = env_with(vars);
  exec::ExecutorOptions eo{RepoPaths(worktree.path())};
  eo.env = env;
  auto executor = exec::make_executor(SandboxConfig{}, eo);
  ASSERT_FALSE(executor->unavailable()) << *executor->unavailable();
  ClientHarness h(config(path), env, executor.get());
  Outcome o = h.call(request());
  ASSERT_TRUE(o.ok()) << o.error().describe();
  EXPECT_EQ(o.response().text(), "Hello from the fake.");
  std::string seen = loopr::testing::read_file(worktree / "env.txt");
  EXPECT_NE(seen.find("ANTHROPIC_API_KEY=sk-ant-secret"), std::string::npos) << seen;
  EXPECT_NE(seen.find("ANTHROPIC_CUSTOM_HEADERS="), std::string::npos);
  EXPECT_EQ(seen.find("GITHUB_TOKEN"), std::string::npos) << seen;
  EXPECT_EQ(loopr::testing::read_file(worktree / "ssh.txt").find("SECRET"), std::string::npos);
  // The person's configuration: unseen and unchanged.
  EXPECT_EQ(loopr::testing::read_file(home / ".claude/settings.json"),
            "{\"hooks\":\"the person's\"}\n");
  EXPECT_EQ(loopr::testing::read_file(worktree / "home-config.txt").find("mcpServers"),
            std::string::npos);
  // The private one: the account, nothing else.
  std::string priv = loopr::testing::read_file(worktree / "private.txt");
  EXPECT_NE(priv.find("\"userID\":\"u1\""), std::string::npos) << priv;
  EXPECT_EQ(priv.find("LOGIN"), std::string::npos) << "a key is set: no login is needed";
  EXPECT_EQ(priv.find("mcpServers"), std::string::npos) << priv;
  EXPECT_EQ(priv.find("projects"), std::string::npos) << priv;
  EXPECT_NE(seen.find("CLAUDE_CONFIG_DIR="), std::string::npos) << seen;
  EXPECT_EQ(seen.find("CLAUDE_CONFIG_DIR=" + home.string()), std::string::npos) << seen;
  // The copy of the login went with the command: nothing is left in the private folder.
  auto left = loopr::testing::run_command(
      "find " + loopr::testing::shell_quote((h.run_dir.path() / "claude").string()) +
      " -mindepth 1 ! -name 'proxy-*.sock'");
  EXPECT_EQ(left.output, "") << "left after the command ended";
}

TEST_F(ClaudeCodeTest, InTheSandboxAMissingCliIsStillAClearError) {
  exec::ExecutorOptions eo{RepoPaths(worktree.path())};
  auto executor = exec::make_executor(SandboxConfig{}, eo);
  ClientHarness h(config((dir / "no-such-claude").string()), env_with({}), executor.get());
  Outcome o = h.call(request());
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.error().message.find("llm.claude_code.command"), std::string::npos)
      << o.error().message;
}
