// The escape suite's world: a repository, a home with an SSH key, secrets in the environment the
// real `loopr` binary (and so its daemon) starts with, and a mock model whose code loop (or plan
// loop) makes the hostile tool calls a test gives. After the tree has run, every check looks
// from outside: the files, git, the daemon's /proc, what the mock model received.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/listener.hpp"
#include "support/mock_llm.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

namespace fs = std::filesystem;

/// Values that must never leave their place: if one shows up in anything loopr recorded or
/// anything the model was sent, a trick worked.
inline constexpr const char* kKeyMarker = "sk-ant-SECRETKEY-5b1e";
inline constexpr const char* kTokenMarker = "ghp_SECRETTOKEN_77c0";
inline constexpr const char* kGeminiMarker = "AIza-GEMINIKEY-0d5e";
inline constexpr const char* kGoogleMarker = "AIza-GOOGLEKEY-91f3";
inline constexpr const char* kSshMarker = "SECRET-SSH-PRIVATE-KEY-4d2a";
inline constexpr const char* kRemoteMarker = "SECRET-REMOTE-PASSWORD-0f9e";
inline constexpr const char* kOtherMarker = "SECRET-OTHER-WORKTREE-c3a8";
inline constexpr const char* kShadowMarker = "SECRET-LOOPR-CONFIG-e61b";

/// One tool call of the hostile model, as a mock-llm `tool_use` list item.
struct Call {
  std::string name;
  nlohmann::json input;
};

inline Call cmd(const std::string& command, int timeout_s = 30) {
  return {"run_command", {{"command", command}, {"timeout_s", timeout_s}}};
}

/// `git rev-parse <what>` in `repo`: its output, with the newline (and git's error if it fails).
inline std::string rev(const std::filesystem::path& repo, const std::string& what) {
  return run_command("git rev-parse " + what, repo.string()).output;
}

class EscapeTest : public ::testing::Test {
 protected:
  TempDir base{"loopr-escape"};
  fs::path repo, home, agent_socket;
  std::unique_ptr<MockLlm> mock;
  std::unique_ptr<Listener> agent;
  std::vector<Call> plan_tricks;  ///< the plan loop's first turn, before it writes its plan
  std::vector<Call> plan_after;   ///< the same turn, after it wrote its plan
  std::vector<Call> code_tricks;  ///< the code loop's first turn of iteration 1
  /// The code loop makes `code_tricks` in every iteration, a fresh retry's too (a model that
  /// keeps at it), not only in its first.
  bool tricks_every_iteration = false;
  std::string extra_config;  ///< appended to .loopr/config.yml
  std::string loops_extra;   ///< more lines of its `loops:` (e.g. `  review: {…}\n`)
  std::string extra_rules;   ///< more mock-llm rules, after the fixture's own
  std::string llm_config = "  provider: anthropic\n  model: claude-sonnet-5-5\n";  ///< in `llm:`
  std::string phase_files;  ///< the phase's `- Files:` list (empty: no such line)
  std::string plan_extra;   ///< more text of the plan's overview (what the person approves)
  int submit_exit = -1;
  std::string submit_output;
  /// false: the person has no provider key (an agent CLI runs on their subscription login).
  bool provider_keys = true;
  /// false: no `llm.base_url` (codex on a login: another endpoint would mean a key).
  bool model_base_url = true;
  /// More variables of the person's environment (`NAME=value `, shell-quoted), e.g. a test seam.
  std::string extra_env;

  void SetUp() override {
    fs::path root = fs::canonical(base.path());
    repo = root / "repo";
    home = root / "home";
    agent_socket = root / "agent.sock";
    write_file(home / ".ssh/id_rsa", std::string("-----BEGIN KEY-----\n") + kSshMarker + "\n");
    write_file(home / ".gitconfig", "[user]\n\tname = The User\n");
    agent = std::make_unique<Listener>(agent_socket);
    // check.sh passes unless the worktree has `fail-once` (which it removes): a trick that needs
    // a second iteration creates it.
    write_file(
        repo / "check.sh",
        "if [ -e fail-once ]; then rm -f fail-once; echo 'failing once'; exit 1; fi\necho ok\n");
    write_file(repo / ".gitignore",
               ".loopr/state/\n.loopr/run/\n.loopr/worktrees/\n.loopr/archive/\n.loopr/logs/\n");
    write_file(repo / ".loopr/prompts/README", "prompts live here\n");
    auto init = run_command(
        "git init -q -b main . && git config user.name test && git config user.email t@t && "
        "git config remote.origin.url https://user:" +
            std::string(kRemoteMarker) +
            "@example.com/repo.git && git add -A && git commit -q -m init",
        repo.string());
    ASSERT_EQ(init.exit_code, 0) << init.output;
    // Another loop's folder, with something this loop must not read.
    write_file(repo / ".loopr/worktrees/code-009-001-001/notes.txt",
               std::string(kOtherMarker) + "\n");
  }

  void TearDown() override {
    if (fs::exists(repo / ".loopr/run/loopr.pid")) {
      auto stop = run_command("timeout 30 " + env() + shell_quote(LOOPR_BIN) + " -C " +
                              shell_quote(repo.string()) + " daemon stop >/dev/null 2>&1");
      if (stop.exit_code != 0 && stop.exit_code != 3 && daemon_pid() > 0)
        ::kill(daemon_pid(), SIGKILL);
    }
    if (HasFailure()) {
      std::cerr << "submit output:\n"
                << submit_output << "\ndaemon.log:\n"
                << run_command("tail -n 60 " +
                               shell_quote((repo / ".loopr/logs/daemon.log").string()))
                       .output
                << "\ncode loop conversation:\n"
                << conversation("code-001-001-001").substr(0, 6000) << "\n";
    }
  }

  /// The environment of the user who runs loopr: their key, a token, an agent socket, a home.
  std::string env() const {
    const std::string keys = provider_keys ? std::string(" ANTHROPIC_API_KEY=") + kKeyMarker +
                                                 " GEMINI_API_KEY=" + kGeminiMarker +
                                                 " GOOGLE_API_KEY=" + kGoogleMarker
                                           : std::string();
    return "env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME=" +
           shell_quote(home.string()) + keys + " GITHUB_TOKEN=" + kTokenMarker +
           " SSH_AUTH_SOCK=" + shell_quote(agent_socket.string()) + " " + extra_env;
  }

  std::string loopr(const std::string& args, int timeout_s = 180) {
    auto r =
        run_command("timeout " + std::to_string(timeout_s) + " " + env() + shell_quote(LOOPR_BIN) +
                    " -C " + shell_quote(repo.string()) + " " + args + " 2>&1");
    submit_exit = r.exit_code;
    return r.output;
  }

  static std::string indent(const std::string& text, int n) {
    std::string pad(static_cast<std::size_t>(n), ' '), out;
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t nl = text.find('\n', pos);
      out += pad + text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos) + "\n";
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
    return out;
  }

  // YAML tool_use items (inputs as JSON, which YAML reads as flow mappings; ASCII only, so a
  // control character travels as a \u escape both read alike).
  static std::string items(const std::vector<Call>& calls) {
    std::string y;
    for (const auto& c : calls)
      y += "        - name: " + c.name + "\n          input: " + c.input.dump(-1, ' ', true) + "\n";
    return y;
  }
  static std::string tool_uses(const std::vector<Call>& calls, const std::string& last) {
    return "      tool_use:\n" + items(calls) + last;
  }

  std::string script() const {
    auto writer = [](const std::string& body) {
      return "        - name: write_file\n          input:\n            path: "
             "\"{{first_user.1}}\"\n"
             "            content: |\n" +
             indent(body, 14);
    };
    std::string plan = "# Plan\n\n## Overview\nWrite a file." + plan_extra +
                       "\n\n## Phases\n1. Write it.\n\n## Success Criteria\n- "
                       "check.sh passes.\n\n"
                       "## Specs to Create\n- spec-files: Write the file.\n";
    std::string spec =
        "# Spec\n\n## Parent Plan\nThe plan.\n\n## Overview\nA file.\n\n## Phases\n1. **Part "
        "one**\n   Write it.\n"
        "   - Files: code/x.txt\n";
    std::string phase =
        "# Phase\n\n## Parent Spec\nThe spec.\n\n## Task\nWrite the file.\n\n## Specific Work\n- "
        "Write it.\n" +
        (phase_files.empty() ? std::string() : "- Files: " + phase_files + "\n") +
        "\n## Success Criteria\n- check.sh passes.\n";
    std::string code_file =
        "        - name: write_file\n          input: {path: \"code/{{loop_id}}.txt\", content: "
        "\"made by {{loop_id}}\\n\"}\n";
    std::string y =
        "defaults:\n  usage: {input_tokens: 1000, output_tokens: 200}\n  thinking: false\nrules:\n";
    y += "  - name: finish\n    match: {turn: 2}\n    reply: {text: \"Done.\"}\n";
    y += "  - name: plan\n    match: {loop_type: plan, first_user: "
         "\"`(\\\\.loopr/plans/[^`]+)`\"}\n    reply:\n" +
         tool_uses(plan_tricks, writer(plan) + items(plan_after));
    y += "  - name: spec\n    match: {loop_type: spec, first_user: "
         "\"`(\\\\.loopr/specs/[^`]+)`\"}\n    reply:\n" +
         tool_uses({}, writer(spec));
    y += "  - name: phase\n    match: {loop_type: phase, first_user: "
         "\"`(\\\\.loopr/phases/[^`]+)`\"}\n    reply:\n" +
         tool_uses({}, writer(phase));
    y += std::string("  - name: code-hostile\n    match: {loop_type: code") +
         (tricks_every_iteration ? "" : ", first_user: \"iteration 1 of\"") + "}\n    reply:\n" +
         tool_uses(code_tricks, code_file);
    y += "  - name: code\n    match: {loop_type: code}\n    reply:\n" + tool_uses({}, code_file);
    return y + extra_rules;
  }

  /// Writes the config, starts the mock model and runs `submit --wait --yes` to the tree's end.
  void run_tree(const std::string& request = "Write the file") {
    prepare();
    submit(request);
  }

  void submit(const std::string& request = "Write the file") {
    submit_output = loopr("submit --wait --yes " + shell_quote(request));
  }

  /// The mock model and the config, committed.
  void prepare() {
    mock = std::make_unique<MockLlm>(script());
    write_file(repo / ".loopr/config.yml",
               "base_branch: main\nmerge: auto\nllm:\n" + llm_config +
                   (model_base_url ? "  base_url: " + mock->url() + "\n" : std::string()) +
                   "  max_retries: 2\nconcurrency:\n  max_loops: 10\n  llm_slots: 8\n  "
                   "requests_per_minute: 100000\n"
                   "limits:\n  no_progress_iterations: 3\nloops:\n  code: {max_iterations: 3, "
                   "validation: \"sh check.sh\", "
                   "iteration_timeout: 2m}\n" +
                   loops_extra +
                   "sandbox:\n  limits: {processes: 128, file_size: 32M, "
                   "tmp_size: 32M, memory: 1G}\n" +
                   extra_config);
    run_command("git add .loopr/config.yml && git commit -q -m config", repo.string());
    config_before = read_file(repo / ".loopr/config.yml");
    git_config_before = read_file(repo / ".git/config");
  }

  /// The tree ran to its end and landed: the code loop's file is on main.
  void expect_tree_merged(const std::string& code_loop = "code-001-001-001") {
    EXPECT_EQ(submit_exit, 0) << submit_output;
    auto shown = run_command("git show main:code/" + code_loop + ".txt", repo.string());
    EXPECT_EQ(shown.output, "made by " + code_loop + "\n") << submit_output;
  }

  /// What the code loop's model saw as tool results and sent, in iteration `n`.
  std::string conversation(const std::string& loop, int n = 1) const {
    char num[8];
    std::snprintf(num, sizeof num, "%03d", n);
    return read_file(repo / ".loopr/logs/loops" / loop / "iterations" / num / "conversation.jsonl");
  }

  long daemon_pid() const {
    std::ifstream in(repo / ".loopr/run/loopr.pid");
    long pid = 0;
    in >> pid;
    return pid;
  }

  /// No marker in anything loopr wrote (logs, transcripts, worktrees, archives), in any commit of
  /// any branch, in any request the model received, or in the daemon's environment.
  void expect_no_secret_anywhere() {
    for (const char* marker : {kKeyMarker, kTokenMarker, kGeminiMarker, kGoogleMarker, kSshMarker,
                               kRemoteMarker, kOtherMarker}) {
      std::string m = shell_quote(marker);
      auto files = run_command("grep -rla --exclude-dir=.git --exclude-dir='code-009*' " + m + " " +
                               shell_quote((repo / ".loopr").string()) + " " +
                               shell_quote(repo.string()) + "/[!.]* 2>/dev/null");
      EXPECT_EQ(files.output, "") << marker << " was recorded in these files";
      auto history = run_command("git log --all -p --format=%B | grep -c " + m, repo.string());
      EXPECT_EQ(history.output, "0\n") << marker << " is in a commit";
      auto sent = run_command("grep -c " + m + " " + shell_quote(mock->log_path()));
      EXPECT_EQ(sent.output, "0\n") << marker << " reached the model";
    }
    long pid = daemon_pid();
    if (pid > 0) {
      std::string environ_text = read_file("/proc/" + std::to_string(pid) + "/environ");
      for (const char* marker : {kKeyMarker, kGeminiMarker, kGoogleMarker})
        EXPECT_EQ(environ_text.find(marker), std::string::npos)
            << marker << " is in the daemon's /proc/pid/environ";
    }
    EXPECT_EQ(agent->accepted(), 0) << "something connected to the SSH agent socket";
  }

  /// The daemon that started the tree still runs and answers.
  void expect_daemon_alive(long pid) {
    EXPECT_GT(pid, 0);
    EXPECT_EQ(::kill(static_cast<pid_t>(pid), 0), 0) << "the daemon is gone";
    EXPECT_EQ(daemon_pid(), pid);
    auto status = run_command(env() + shell_quote(LOOPR_BIN) + " -C " + shell_quote(repo.string()) +
                              " daemon status");
    EXPECT_EQ(status.exit_code, 0) << status.output;
  }

  /// The base branch moved only by loopr's merge of the tree: it is the integration branch's
  /// tip (a fast-forward) or a merge of it onto where main was.
  void expect_main_moved_only_by_loopr(const std::string& main_before,
                                       const std::string& plan = "001") {
    auto rev = [&](const std::string& r) {
      return run_command("git rev-parse " + r, repo.string()).output;
    };
    std::string integration = rev("loopr/" + plan);
    bool fast_forward = rev("main") == integration;
    bool merged = rev("main^1") == main_before && rev("main^2") == integration;
    EXPECT_TRUE(fast_forward || merged) << "main is not what loopr merged";
    EXPECT_EQ(run_command("git merge-base --is-ancestor " + main_before.substr(0, 40) + " main",
                          repo.string())
                  .exit_code,
              0);
  }

  std::string config_before, git_config_before;
};

}  // namespace loopr::testing
