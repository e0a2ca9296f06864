// `loopr submit` and `loopr daemon` check what would make a plan fail before they create
// anything (issue #21 item 2): each problem one line `loopr: what (what to do)`, exit 2, and
// nothing created, neither a plan in the store nor a branch in git. `--force` skips the checks
// that can be wrong (a key a gateway does not need, a program installed later), never the base
// branch or a merge in progress.
#include <sys/stat.h>

#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;
using nlohmann::json;

namespace {

class SubmitPreflight : public CliE2E {
 protected:
  /// The fixture's repository (and mock model) with this config instead of the fixture's.
  void make_repo_with(const std::string& llm,
                      const std::string& code = "validation: \"sh check.sh\"",
                      const std::string& base = "main") {
    make_repo();
    write_config(llm, code, base);
  }

  void write_config(const std::string& llm, const std::string& code = "validation: \"sh check.sh\"",
                    const std::string& base = "main") {
    write_file(dir / ".loopr/config.yml",
               "base_branch: " + base + "\nllm:\n" + llm +
                   "\n  max_retries: 1\nloops:\n  code: {max_iterations: 2, " + code + "}\n");
  }

  std::string mock_llm_yaml() const { return "  provider: anthropic\n  base_url: " + mock->url(); }

  /// `loopr -C REPO ARGS` with `env` (an `env` command line) instead of the fixture's.
  CliRun loopr_with_env(const std::string& env, const std::string& args) {
    auto r = run_command("timeout 60 " + env + " " + shell_quote(LOOPR_BIN) + " -C " +
                         shell_quote(dir.str()) + " " + args + " < /dev/null > " +
                         shell_quote((io / "out").string()) + " 2> " +
                         shell_quote((io / "err").string()));
    return CliRun{r.exit_code, read_file(io / "out"), read_file(io / "err")};
  }

  static std::string no_keys() {
    return "env -u LOOPR_PROVIDER -u LOOPR_MODEL -u ANTHROPIC_API_KEY -u ANTHROPIC_BASE_URL -u "
           "OPENAI_API_KEY -u OPENAI_BASE_URL";
  }

  void expect_refused(const CliRun& r, const std::vector<std::string>& lines) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(r.out, "") << "no plan id may be printed";
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), static_cast<long>(lines.size()))
        << r.err;
    std::istringstream in(r.err);
    std::string line;
    for (const auto& expected : lines) {
      std::getline(in, line);
      EXPECT_EQ(line.rfind("loopr: ", 0), 0u) << line;
      EXPECT_NE(line.find(expected), std::string::npos) << "want " << expected << " in " << line;
      EXPECT_TRUE(!line.empty() && line.back() == ')') << "every line says what to do: " << line;
    }
  }

  /// No daemon was started, so no store was made, and git has no loopr branch.
  void expect_nothing_created() {
    EXPECT_FALSE(std::filesystem::exists(dir / ".loopr/state")) << "a store was created";
    EXPECT_FALSE(std::filesystem::exists(dir / ".loopr/run/loopr.sock")) << "a daemon started";
    EXPECT_EQ(git("branch --list 'loopr/*'"), "");
  }

  /// The store of the daemon (started now with a key, if it was not running) has no loop.
  void expect_store_empty() {
    CliRun start = loopr("daemon");
    ASSERT_EQ(start.exit_code, 0) << start.err;
    CliRun list = loopr("--json list --all");
    ASSERT_EQ(list.exit_code, 0) << list.err;
    EXPECT_TRUE(list.json()["loops"].empty()) << list.out;
    EXPECT_EQ(git("branch --list 'loopr/*'"), "");
  }
};

}  // namespace

TEST_F(SubmitPreflight, MissingKeyIsRefusedAndNothingIsCreated) {
  make_repo_with("  provider: anthropic");  // https://api.anthropic.com: needs the key
  CliRun r = loopr_with_env(no_keys(), "submit 'Add a flag'");
  expect_refused(r, {"ANTHROPIC_API_KEY is not set, and llm.provider anthropic needs it for "
                     "https://api.anthropic.com (export ANTHROPIC_API_KEY="});
  expect_nothing_created();
  // The store has no plan either: a daemon started with the key lists nothing.
  expect_store_empty();
}

TEST_F(SubmitPreflight, OpenAIKeyIsNeededUnlessTheServerIsLocal) {
  make_repo_with("  provider: openai\n  model: m");
  expect_refused(loopr_with_env(no_keys(), "submit 'Add a flag'"), {"OPENAI_API_KEY is not set"});
  expect_nothing_created();
  // A local server needs no key: the same submit passes the checks and makes plan 001.
  write_config("  provider: openai\n  model: m\n  base_url: " + mock->url());
  CliRun ok = loopr_with_env(no_keys(), "submit 'Add a flag'");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "001\n");
}

TEST_F(SubmitPreflight, ForceSkipsTheKeyCheckAndTheDaemonStartsToo) {
  make_repo_with("  provider: anthropic\n  base_url: https://gateway.invalid");
  CliRun r = loopr_with_env(no_keys(), "submit 'Add a flag'");
  expect_refused(r, {"ANTHROPIC_API_KEY is not set"});
  EXPECT_NE(r.err.find("`loopr submit --force` skips this check"), std::string::npos) << r.err;
  CliRun forced = loopr_with_env(no_keys(), "--json submit 'Add a flag' --force");
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(forced.json()["id"], "001");
  EXPECT_EQ(loopr_with_env(no_keys(), "daemon status").exit_code, 0);
  EXPECT_TRUE(wait_until([&] {
    return read_file(dir / ".loopr/logs/daemon.log").find("started with --force") !=
           std::string::npos;
  })) << read_file(dir / ".loopr/logs/daemon.log");
}

TEST_F(SubmitPreflight, ARunningDaemonsEnvironmentIsTheOneThatCounts) {
  // The daemon was started from a shell with the key; a submit from one without is fine.
  make_repo_with("  provider: anthropic\n  base_url: https://gateway.invalid");
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  CliRun r = loopr_with_env(no_keys(), "submit 'Add a flag'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "001\n");
}

TEST_F(SubmitPreflight, ClaudeCodeNeedsItsCli) {
  make_repo_with("  provider: claude-code\n  claude_code: {command: claude-not-installed}");
  CliRun r = loopr("submit 'Add a flag'");
  expect_refused(r, {"the `claude-not-installed` CLI that llm.provider claude-code runs is not on "
                     "the PATH (install Claude Code"});
  expect_nothing_created();
  CliRun daemon = loopr("daemon");
  expect_refused(daemon, {"claude-not-installed"});
  EXPECT_NE(daemon.err.find("`loopr daemon --force` starts it anyway"), std::string::npos);
  EXPECT_EQ(loopr("daemon --foreground").exit_code, 2);
  expect_nothing_created();
  // Found on the PATH, the check passes (the daemon starts; no plan needed).
  write_file(io / "bin/claude-not-installed", "#!/bin/sh\necho 1.0.0\n");
  ::chmod((io / "bin/claude-not-installed").c_str(), 0755);
  CliRun found = loopr_with_env("env PATH=" + (io / "bin").string() + ":/usr/bin:/bin", "daemon");
  EXPECT_EQ(found.exit_code, 0) << found.err;
}

TEST_F(SubmitPreflight, ValidationProgramMustExistUnlessForced) {
  make_repo();
  write_config(mock_llm_yaml(), "validation: \"npx-not-here run test && sh check.sh\"");
  CliRun r = loopr("submit 'Add a flag'");
  expect_refused(r, {"the validation command `npx-not-here run test && sh check.sh` runs "
                     "`npx-not-here`, which is not on the PATH (install it, or change "
                     "loops.code.validation"});
  expect_nothing_created();
  // A script of the repository is found relative to it; a missing one is named.
  write_config(mock_llm_yaml(), "validation: \"./scripts/test.sh\"");
  expect_refused(loopr("submit 'Add a flag'"),
                 {"runs `./scripts/test.sh`, which is not an executable file in"});
  expect_nothing_created();
  // --force: it may be installed before the code loops run.
  CliRun forced = loopr("submit 'Add a flag' --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(forced.out, "001\n");
}

TEST_F(SubmitPreflight, EmptyValidationIsRefusedUntilSet) {
  make_repo();
  write_config(mock_llm_yaml(), "validation: \"\"");
  expect_refused(loopr("submit 'Add a flag'"),
                 {"loops.code.validation is not set: code loops would have no test to pass"});
  expect_nothing_created();
  EXPECT_EQ(loopr("submit 'Add a flag' --force").exit_code, 0);
}

TEST_F(SubmitPreflight, MissingBaseBranchIsRefusedEvenWithForce) {
  make_repo();
  write_config(mock_llm_yaml(), "validation: \"sh check.sh\"", "trunk");
  for (const char* args : {"submit 'Add a flag'", "submit 'Add a flag' --force"}) {
    expect_refused(loopr(args), {"the base branch trunk does not exist (set base_branch in "
                                 ".loopr/config.yml; this checkout is on main)"});
    expect_nothing_created();
  }
}

TEST_F(SubmitPreflight, AMergeInProgressIsRefusedEvenWithForce) {
  make_repo();
  write_config(mock_llm_yaml());
  git("commit -qam 'loopr config'");
  git("checkout -qb side");
  write_file(dir / "check.sh", "echo side\n");
  git("commit -qam side");
  git("checkout -q main");
  write_file(dir / "check.sh", "echo main\n");
  git("commit -qam main");
  git("merge side");  // conflicts: MERGE_HEAD stays
  ASSERT_TRUE(std::filesystem::exists(dir / ".git/MERGE_HEAD"));
  for (const char* args : {"submit 'Add a flag'", "submit 'Add a flag' --force"}) {
    expect_refused(loopr(args), {"a merge is in progress in " + dir.str()});
    expect_nothing_created();
  }
  git("merge --abort");
  EXPECT_EQ(loopr("submit 'Add a flag'").exit_code, 0);
}

TEST_F(SubmitPreflight, EveryProblemIsOneLine) {
  make_repo_with("  provider: anthropic", "validation: \"nope-not-here\"", "trunk");
  expect_refused(loopr_with_env(no_keys(), "submit 'Add a flag'"),
                 {"ANTHROPIC_API_KEY is not set", "`nope-not-here`", "the base branch trunk"});
  expect_nothing_created();
}

TEST_F(SubmitPreflight, RefusedWhileTheDaemonRunsLeavesItsStoreEmpty) {
  make_repo();
  write_config(mock_llm_yaml());
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  write_file(dir / ".loopr/config.yml",
             "base_branch: main\nllm:\n" + mock_llm_yaml() +
                 "\nloops:\n  code: {validation: \"not-a-program-at-all\"}\n");
  expect_refused(loopr("submit 'Add a flag'"), {"`not-a-program-at-all`"});
  expect_store_empty();
}

TEST_F(SubmitPreflight, DaemonRefusesToStartWithoutTheKeyUnlessForced) {
  make_repo_with("  provider: anthropic");
  expect_refused(loopr_with_env(no_keys(), "daemon"), {"ANTHROPIC_API_KEY is not set"});
  expect_refused(loopr_with_env(no_keys(), "daemon --foreground"), {"ANTHROPIC_API_KEY"});
  expect_nothing_created();
  CliRun forced = loopr_with_env(no_keys(), "--json daemon --force");
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(forced.json()["started"], true);
}
