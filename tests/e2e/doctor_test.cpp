// `loopr doctor` through the real binary: every check passing in a ready repository, and each
// failing for the reason a new user would meet (no key, no `claude`, a bad config, outside a
// repository, an unreachable endpoint, a refused key, a missing test program, no git, no
// bubblewrap, a full disk). Exit 0 when ready, 1 when not; `--json` and `-q`.
#include <sys/stat.h>

#include <sstream>

#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;
using nlohmann::json;

namespace {

class Doctor : public CliE2E {
 protected:
  /// `loopr ARGS` (no -C) from `cwd` with the environment `env` (an `env …` prefix).
  CliRun run(const std::string& env, const std::string& args, const std::string& cwd) {
    auto r = run_command("cd " + shell_quote(cwd) + " && timeout 60 " + env + " " +
                         shell_quote(LOOPR_BIN) + " " + args + " < /dev/null > " +
                         shell_quote((io / "out").string()) + " 2> " +
                         shell_quote((io / "err").string()));
    return CliRun{r.exit_code, read_file(io / "out"), read_file(io / "err")};
  }

  std::string base_env() const {
    return "env -u LOOPR_PROVIDER -u LOOPR_MODEL -u ANTHROPIC_BASE_URL -u OPENAI_BASE_URL -u "
           "OPENAI_API_KEY -u ANTHROPIC_API_KEY";
  }

  /// `doctor --json` in the repository; the checks by name.
  std::map<std::string, json> doctor(const std::string& env_extra = "ANTHROPIC_API_KEY=test",
                                     const std::string& flags = "", int expect_exit = -1) {
    last = run(base_env() + " " + env_extra, "--json doctor " + flags, dir.str());
    if (expect_exit >= 0) {
      EXPECT_EQ(last.exit_code, expect_exit) << last.out << last.err;
    }
    std::map<std::string, json> out;
    json doc = last.json();
    for (const auto& c : doc["checks"]) out[c["name"].get<std::string>()] = c;
    EXPECT_EQ(doc["ready"], last.exit_code == 0) << last.out;
    return out;
  }

  void write_config(const std::string& llm, const std::string& validation = "sh check.sh") {
    write_file(dir / ".loopr/config.yml", "base_branch: main\nllm:\n" + llm +
                                              "\nloops:\n  code: {validation: \"" + validation +
                                              "\"}\n");
  }

  static void expect_status(std::map<std::string, json>& checks, const std::string& name,
                            const std::string& status, const std::string& message_part = "") {
    ASSERT_TRUE(checks.count(name)) << name;
    EXPECT_EQ(checks[name]["status"], status) << checks[name].dump();
    if (!message_part.empty()) {
      EXPECT_NE(checks[name]["message"].get<std::string>().find(message_part), std::string::npos)
          << checks[name].dump();
    }
    if (status == "fail") {
      EXPECT_FALSE(checks[name].value("hint", "").empty()) << "a failure says what to do";
    }
  }

  CliRun last;
};

const char* const kCheckNames[] = {"git",        "repository", "config",   "sandbox", "provider",
                                   "validation", "tests",      "endpoint", "disk",    "daemon"};

}  // namespace

TEST_F(Doctor, ReadyRepositoryPassesEveryCheck) {
  make_repo();
  auto checks = doctor("ANTHROPIC_API_KEY=test", "", 0);
  EXPECT_EQ(checks.size(), std::size(kCheckNames));
  for (const char* name : kCheckNames) expect_status(checks, name, "ok");
  expect_status(checks, "git", "ok", "git 2.");
  expect_status(checks, "repository", "ok", "on branch main");
  expect_status(checks, "provider", "ok", "ANTHROPIC_API_KEY is set");
  expect_status(checks, "validation", "ok", "sh check.sh");
  expect_status(checks, "tests", "ok",
                "loops.code.validation `sh check.sh` passes on main in a fresh worktree");
  expect_status(checks, "endpoint", "ok", mock->url() + "/v1/models answered HTTP 200");
  expect_status(checks, "daemon", "ok", "not running");
  // The request really reached the model server, with the key.
  bool asked = false;
  for (const auto& r : mock->requests())
    if (r["path"] == "/v1/models") asked = true;
  EXPECT_TRUE(asked);
  // The same as text: one line per check (the sandbox's view indented below its line), then
  // "ready".
  CliRun text = run(base_env() + " ANTHROPIC_API_KEY=test", "doctor", dir.str());
  EXPECT_EQ(text.exit_code, 0) << text.out;
  long unindented = 0;
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] != ' ') ++unindented;
  EXPECT_EQ(unindented, static_cast<long>(std::size(kCheckNames)) + 1) << text.out;
  EXPECT_EQ(text.out.rfind("✓ git: git ", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("\nready\n"), std::string::npos) << text.out;
}

TEST_F(Doctor, OfflineSkipsTheEndpointAndARunningDaemonIsReported) {
  make_repo();
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  auto checks = doctor("ANTHROPIC_API_KEY=test", "--offline", 0);
  expect_status(checks, "endpoint", "skip", "--offline");
  expect_status(checks, "daemon", "ok", "running (pid " + std::to_string(daemon_pid()));
  for (const auto& r : mock->requests()) EXPECT_NE(r["path"], "/v1/models");
}

TEST_F(Doctor, MissingKeyFails) {
  make_repo();
  write_config("  provider: anthropic");
  auto checks = doctor("", "--offline", 1);
  expect_status(checks, "provider", "fail", "ANTHROPIC_API_KEY is not set");
  EXPECT_NE(checks["provider"]["hint"].get<std::string>().find("export ANTHROPIC_API_KEY"),
            std::string::npos);
  // A local server needs none.
  write_config("  provider: openai\n  model: m\n  base_url: " + mock->url());
  checks = doctor("", "--offline", 0);
  expect_status(checks, "provider", "ok", "no key needed for the local server");
}

TEST_F(Doctor, ClaudeCodeNeedsTheClaudeCliAndReportsItsVersion) {
  make_repo();
  write_config("  provider: claude-code");
  std::filesystem::create_directories(io / "home");
  std::string path =
      "PATH=" + (io / "bin").string() + ":/usr/bin:/bin HOME=" + (io / "home").string();
  auto checks = doctor(path, "--offline", 1);
  expect_status(checks, "provider", "fail", "the `claude` CLI that llm.provider claude-code runs");
  write_file(io / "bin/claude",
             "#!/bin/sh\n[ \"$1\" = --version ] && echo '2.1.7 (Claude Code)'\n");
  ::chmod((io / "bin/claude").c_str(), 0755);
  // Its key or its login: neither is a failure that says both ways out.
  checks = doctor(path, "--offline", 1);
  expect_status(checks, "provider", "fail", "claude-code: no key and no login");
  EXPECT_NE(checks["provider"]["hint"].get<std::string>().find("ANTHROPIC_API_KEY"),
            std::string::npos);
  checks = doctor(path + " ANTHROPIC_API_KEY=test", "--offline", 0);
  expect_status(checks, "provider", "ok", "2.1.7 (Claude Code)");
  expect_status(checks, "provider", "ok", "ANTHROPIC_API_KEY is set");
  EXPECT_NE(checks["provider"]["message"].get<std::string>().find((io / "bin/claude").string()),
            std::string::npos);
}

TEST_F(Doctor, BadConfigFailsNamingKeyAndLine) {
  make_repo();
  write_file(dir / ".loopr/config.yml", "merge: auto\nllm:\n  max_tokens: lots\n");
  auto checks = doctor("ANTHROPIC_API_KEY=test", "--offline", 1);
  expect_status(checks, "config", "fail", "config.yml:3: llm.max_tokens");
  expect_status(checks, "validation", "skip");
  // No config at all: run `loopr init`.
  std::filesystem::remove(dir / ".loopr/config.yml");
  checks = doctor("ANTHROPIC_API_KEY=test", "--offline", 1);
  expect_status(checks, "config", "fail", "no .loopr/config.yml");
  EXPECT_NE(checks["config"]["hint"].get<std::string>().find("loopr init"), std::string::npos);
}

TEST_F(Doctor, OutsideARepositoryFails) {
  TempDir elsewhere{"loopr-doctor-outside"};
  last = run(base_env() + " ANTHROPIC_API_KEY=test", "--json doctor --offline", elsewhere.str());
  EXPECT_EQ(last.exit_code, 1) << last.out << last.err;
  std::map<std::string, json> checks;
  json doc = last.json();
  for (const auto& c : doc["checks"]) checks[c["name"].get<std::string>()] = c;
  expect_status(checks, "repository", "fail", "not inside a git repository");
  expect_status(checks, "config", "skip");
  expect_status(checks, "daemon", "skip");
  expect_status(checks, "provider", "ok");  // the defaults and the environment
  // -q: nothing on stdout, the failure as the usual error line.
  CliRun quiet =
      run(base_env() + " ANTHROPIC_API_KEY=test", "-q doctor --offline", elsewhere.str());
  EXPECT_EQ(quiet.exit_code, 1);
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(quiet.err.rfind("loopr: not inside a git repository", 0), 0u) << quiet.err;
  EXPECT_EQ(std::count(quiet.err.begin(), quiet.err.end(), '\n'), 1) << quiet.err;
}

TEST_F(Doctor, UnreachableEndpointAndARefusedKeyFail) {
  make_repo();
  write_config("  provider: anthropic\n  base_url: http://127.0.0.1:1");
  auto checks = doctor("ANTHROPIC_API_KEY=test", "", 1);
  expect_status(checks, "endpoint", "fail", "cannot reach http://127.0.0.1:1/v1/models");
  // A server that wants another key answers 401.
  MockLlm strict("rules: []\n", {"--api-key", "the-right-key"});
  write_config("  provider: anthropic\n  base_url: " + strict.url());
  checks = doctor("ANTHROPIC_API_KEY=a-wrong-key", "", 1);
  expect_status(checks, "endpoint", "fail", "answered HTTP 401");
  EXPECT_NE(checks["endpoint"]["message"].get<std::string>().find("the key was refused"),
            std::string::npos);
  checks = doctor("ANTHROPIC_API_KEY=the-right-key", "", 0);
  expect_status(checks, "endpoint", "ok", "answered HTTP 200");
}

TEST_F(Doctor, TestsThatCannotRunInAFreshWorktreeFailNamingTheKeysAndSkipTestsSkipsThem) {
  make_repo();
  // The tests pass in the checkout only: they need a file git does not hold.
  write_file(dir / "check.sh", "test -f generated.txt || { echo 'no generated.txt'; exit 3; }\n");
  write_file(dir / "generated.txt", "made by hand\n");
  write_file(dir / ".gitignore", read_file(dir / ".gitignore") + "generated.txt\n");
  ASSERT_EQ(run_command("git commit -qam 'needs generated.txt'", dir.str()).exit_code, 0);
  ASSERT_EQ(run_command("sh check.sh", dir.str()).exit_code, 0);
  auto checks = doctor("ANTHROPIC_API_KEY=test", "--offline", 1);
  expect_status(checks, "tests", "fail", "`sh check.sh` failed with exit code 3 on main");
  EXPECT_NE(checks["tests"].value("detail", "").find("no generated.txt"), std::string::npos)
      << checks["tests"].dump();
  for (const char* key : {"sandbox.read_only", "setup:", "--skip-tests"})
    EXPECT_NE(checks["tests"]["hint"].get<std::string>().find(key), std::string::npos) << key;
  EXPECT_EQ(git("worktree list").find("doctor-"), std::string::npos) << "its worktree is gone";
  CliRun text = run(base_env() + " ANTHROPIC_API_KEY=test", "doctor --offline", dir.str());
  EXPECT_NE(text.out.find("✗ tests: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("    no generated.txt\n"), std::string::npos) << text.out;
  // A setup that makes it: passes.
  write_file(dir / ".loopr/config.yml", read_file(dir / ".loopr/config.yml") +
                                            "setup: [\"echo generated > generated.txt\"]\n");
  checks = doctor("ANTHROPIC_API_KEY=test", "--offline", 0);
  expect_status(checks, "tests", "ok", "passes on main in a fresh worktree");
  write_file(dir / ".loopr/config.yml", read_file(dir / ".loopr/config.yml") + "baseline: off\n");
  checks = doctor("ANTHROPIC_API_KEY=test", "--offline --skip-tests", 0);
  expect_status(checks, "tests", "skip", "--skip-tests");
}

TEST_F(Doctor, MissingTestProgramFails) {
  make_repo();
  write_config("  provider: anthropic\n  base_url: " + mock->url(), "pnpm-not-here test");
  auto checks = doctor("ANTHROPIC_API_KEY=test", "--offline", 1);
  expect_status(checks, "validation", "fail", "`pnpm-not-here`, which is not on the PATH");
}

TEST_F(Doctor, WithoutGitOrBubblewrapOnThePath) {
  make_repo();
  // A PATH with neither git nor bwrap.
  std::filesystem::create_directories(io / "empty");
  auto checks =
      doctor("PATH=" + (io / "empty").string() + " ANTHROPIC_API_KEY=test", "--offline", 1);
  expect_status(checks, "git", "fail", "git is not installed");
  expect_status(checks, "sandbox", "fail", "bubblewrap (bwrap) is not installed");
  // git alone: the sandbox is still missing.
  std::filesystem::create_directories(io / "gitonly");
  std::filesystem::create_symlink("/usr/bin/git", io / "gitonly/git");
  checks = doctor("PATH=" + (io / "gitonly").string() + " ANTHROPIC_API_KEY=test", "--offline", 1);
  expect_status(checks, "git", "ok");
  expect_status(checks, "sandbox", "fail", "bubblewrap");
}

// A repository on an 8 MiB tmpfs (made with bubblewrap, which loopr needs anyway).
TEST_F(Doctor, LittleFreeDiskFails) {
  std::filesystem::create_directories(io / "small");
  std::string script =
      "cd " + shell_quote((io / "small").string()) +
      " && git init -q -b main . && git -c user.name=t -c user.email=t@t commit -q --allow-empty "
      "-m init && " +
      shell_quote(LOOPR_BIN) + " -q init --validation true && ANTHROPIC_API_KEY=test " +
      shell_quote(LOOPR_BIN) + " --json doctor --offline";
  auto r =
      run_command("bwrap --dev-bind / / --size 8388608 --tmpfs " +
                  shell_quote((io / "small").string()) + " sh -c " + shell_quote(script) + " 2>&1");
  ASSERT_NE(r.output.find("\"checks\""), std::string::npos) << r.output;
  json doc = json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  for (const auto& c : doc["checks"]) {
    if (c["name"] != "disk") continue;
    EXPECT_EQ(c["status"], "fail") << c.dump();
    EXPECT_NE(c["message"].get<std::string>().find("MiB free in " + (io / "small").string()),
              std::string::npos)
        << c.dump();
  }
}

TEST_F(Doctor, SandboxIsTheExecutorsSelfTestAndNoneIsSaidLoudly) {
  make_repo();
  auto checks = doctor("ANTHROPIC_API_KEY=test", "--offline", 0);
  expect_status(checks, "sandbox", "ok", "bubblewrap: each command in its own");
  // The view the sandbox is made from (docs/security.md, B1), line by line.
  std::string view = checks["sandbox"].value("detail", "");
  EXPECT_NE(view.find("ro    /usr"), std::string::npos) << view;
  EXPECT_NE(view.find("rw    /<the loop's worktree>"), std::string::npos) << view;
  EXPECT_EQ(view.find(" /var"), std::string::npos) << view;
  write_file(dir / ".loopr/config.yml",
             read_file(dir / ".loopr/config.yml") + "sandbox: none\n");
  checks = doctor("ANTHROPIC_API_KEY=test", "--offline", 0);
  expect_status(checks, "sandbox", "ok", "OFF (sandbox: none");
}

TEST_F(Doctor, CodexAndGeminiNeedTheirCliAndAKeyOrALogin) {
  make_repo();
  std::filesystem::create_directories(io / "home");
  std::string env =
      "PATH=" + (io / "bin").string() + ":/usr/bin:/bin HOME=" + (io / "home").string();
  write_config("  provider: codex");
  auto checks = doctor(env, "--offline", 1);
  expect_status(checks, "provider", "fail", "the `codex` CLI that llm.provider codex runs");
  write_file(io / "bin/codex", "#!/bin/sh\n[ \"$1\" = --version ] && echo 'codex-cli 0.171.0'\n");
  ::chmod((io / "bin/codex").c_str(), 0755);
  checks = doctor(env, "--offline", 1);
  expect_status(checks, "provider", "fail", "codex: no key and no login");
  // A login file that holds no login says so.
  write_file(io / "home/.codex/auth.json", "{}\n");
  checks = doctor(env, "--offline", 1);
  expect_status(checks, "provider", "fail", "holds no codex login");
  // A ChatGPT login: its access token's `exp` (2033-05-18) is when it expires.
  write_file(io / "home/.codex/auth.json",
             "{\"tokens\":{\"id_token\":\"eyJhbGciOiJub25lIn0.eyJleHAiOjIwMDAwMDAwMDB9.s\","
             "\"access_token\":\"eyJhbGciOiJub25lIn0.eyJleHAiOjIwMDAwMDAwMDB9.s\","
             "\"refresh_token\":\"rt\"},\"last_refresh\":\"2026-11-28T00:00:00Z\"}\n");
  checks = doctor(env, "--offline", 0);
  expect_status(checks, "provider", "ok", "codex-cli 0.171.0");
  expect_status(checks, "provider", "ok", "logged in");
  expect_status(checks, "provider", "ok", "its token valid until 2033-05-18");

  // Gemini's endpoint is probed at its own path, with its key.
  write_config("  provider: gemini\n  base_url: " + mock->url());
  write_file(io / "bin/gemini", "#!/bin/sh\n[ \"$1\" = --version ] && echo '0.61.0'\n");
  ::chmod((io / "bin/gemini").c_str(), 0755);
  checks = doctor(env + " GEMINI_API_KEY=AIza-test", "", 0);
  expect_status(checks, "provider", "ok", "GEMINI_API_KEY is set");
  expect_status(checks, "endpoint", "ok", mock->url() + "/v1beta/models answered HTTP");
  bool asked = false;
  for (const auto& r : mock->requests())
    if (r["path"] == "/v1beta/models") asked = true;
  EXPECT_TRUE(asked);
}

// Every provider the config names is checked (loops.<type>.provider), a login with its token's
// expiry, an expired one as what the CLI refreshes, a malformed one as a failure.
TEST_F(Doctor, EveryProviderOfTheConfigAndItsLoginAreChecked) {
  make_repo();
  std::filesystem::create_directories(io / "home");
  write_file(io / "bin/claude", "#!/bin/sh\n[ \"$1\" = --version ] && echo '2.1.7 (Claude Code)'\n");
  ::chmod((io / "bin/claude").c_str(), 0755);
  std::string env =
      "PATH=" + (io / "bin").string() + ":/usr/bin:/bin HOME=" + (io / "home").string();
  write_file(dir / ".loopr/config.yml",
             "base_branch: main\nllm:\n  provider: openai\n  model: m\n  base_url: " + mock->url() +
                 "\nloops:\n  code: {validation: \"sh check.sh\", provider: claude-code}\n");
  auto login = [&](long long expires) {
    write_file(io / "home/.claude/.credentials.json",
               "{\"claudeAiOauth\":{\"accessToken\":\"at\",\"refreshToken\":\"rt\","
               "\"expiresAt\":" + std::to_string(expires) + "}}");
  };
  login(1000);  // 1970: expired
  auto checks = doctor(env + " OPENAI_API_KEY=test", "", 0);
  expect_status(checks, "provider", "ok", "openai");
  expect_status(checks, "provider (claude-code)", "ok", "logged in (");
  expect_status(checks, "provider (claude-code)", "ok", "its token expired at 1970-01-01");
  expect_status(checks, "endpoint (claude-code)", "ok", mock->url() + "/v1/models answered");
  expect_status(checks, "endpoint (claude-code)", "ok", "on its login: reachable");
  login(2000000000000LL);
  checks = doctor(env, "--offline", 0);
  expect_status(checks, "provider (claude-code)", "ok", "its token valid until 2033-05-18");
  write_file(io / "home/.claude/.credentials.json", "{\"claudeAiOauth\":{}}");
  checks = doctor(env, "--offline", 1);
  expect_status(checks, "provider (claude-code)", "fail", "holds no claude login");
}
