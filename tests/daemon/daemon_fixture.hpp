// A real daemon for a test: a temp git repository with `.loopr/config.yml`, the real mock-llm
// server, and `run_daemon` in a forked child process serving the real Unix socket. Tests talk
// to it only through the HTTP client, the way the CLI does, and check git with the git CLI.
#pragma once

#include <csignal>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <loopr/core/repo_paths.hpp>
#include <loopr/daemon/daemon.hpp>
#include <loopr/daemon/http.hpp>

#include "support/git_repo.hpp"
#include "support/mock_llm.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "support/tree_artifacts.hpp"

namespace loopr::testing {

/// A mock-llm script that plays every loop of a tree: plans with `specs`, specs with `phases`
/// phases each, phases, and code loops that write `code/<id>.txt` and pass on iteration
/// `code_iterations` (earlier iterations leave `wip/<id>.txt` saying WIP, which fails
/// `check.sh`). `extra_rules` (YAML list items) go first, so they win.
struct TreeScript {
  std::vector<std::string> specs = {"alpha", "beta"};
  int phases = 2;
  std::vector<std::string> iterated_specs = {"gamma", "delta"};  ///< when the feedback says USE-GAMMA
  int code_iterations = 1;
  std::string code_delay = "0ms";
  std::string spec_delay = "0ms";
  std::string phase_delay = "0ms";
  std::string extra_rules;
  std::string faults;  ///< a `faults:` block (random fault injection), or empty

  std::string yaml() const {
    auto delay = [](const std::string& d) { return d == "0ms" ? std::string() : "      fault: {delay: " + d + "}\n"; };
    auto plan = [](const std::vector<std::string>& names) {
      std::string s = "# A plan for the test\n\n## Overview\nMake files.\n\n## Phases\n1. Write the files.\n\n"
                      "## Success Criteria\n- check.sh passes.\n\n## Specs to Create\n";
      for (const auto& name : names) s += "- spec-" + name + ": Write the " + name + " files.\n";
      return s;
    };
    static const char* kNames[] = {"one", "two", "three", "four", "five", "six"};
    std::string spec_body = "# Spec {{loop_id}}\n\n## Parent Plan\nThe plan.\n\n## Overview\nFiles for {{loop_id}}.\n\n## Phases\n";
    for (int i = 0; i < phases; ++i)
      spec_body += std::to_string(i + 1) + ". **Part " + kNames[i] + "**\n   Write part " + kNames[i] +
                   ".\n   - Files: code/x.txt\n";
    std::string phase_body = "# Phase {{loop_id}}\n\n## Parent Spec\nThe spec.\n\n## Task\nWrite the file of {{loop_id}}.\n\n"
                             "## Specific Work\n- Write it.\n\n## Success Criteria\n- check.sh passes.\n";
    auto writer = [&](const std::string&, const std::string& body) {
      return "      tool_use:\n        name: write_file\n        input:\n          path: \"{{first_user.1}}\"\n"
             "          content: |\n" + indent(body, 12);
    };
    std::string wip_iterations = code_iterations <= 1 ? "" : "[1-" + std::to_string(code_iterations - 1) + "]";
    std::string y = "defaults:\n  usage: {input_tokens: 1000, output_tokens: 200}\n  thinking: false\n" + faults + "rules:\n";
    y += extra_rules;
    y += "  - name: finish\n    match: {turn: 2}\n    reply: {text: \"Done.\"}\n";
    y += "  - name: plan-iterated\n    match: {loop_type: plan, user: \"USE-GAMMA\", first_user: \"`(\\\\.loopr/plans/[^`]+)`\"}\n"
         "    reply:\n" + writer("", plan(iterated_specs));
    y += "  - name: plan\n    match: {loop_type: plan, first_user: \"`(\\\\.loopr/plans/[^`]+)`\"}\n    reply:\n" +
         writer("", plan(specs));
    y += "  - name: spec\n    match: {loop_type: spec, first_user: \"`(\\\\.loopr/specs/[^`]+)`\"}\n    reply:\n" +
         delay(spec_delay) + writer("", spec_body);
    y += "  - name: phase\n    match: {loop_type: phase, first_user: \"`(\\\\.loopr/phases/[^`]+)`\"}\n    reply:\n" +
         delay(phase_delay) + writer("", phase_body);
    if (!wip_iterations.empty())
      y += "  - name: code-wip\n    match: {loop_type: code, first_user: \"iteration " + wip_iterations + " of\"}\n"
           "    reply:\n" + delay(code_delay) +
           "      tool_use:\n        name: write_file\n        input: {path: \"wip/{{loop_id}}.txt\", content: \"WIP\\n\"}\n";
    y += "  - name: code\n    match: {loop_type: code}\n    reply:\n" + delay(code_delay) +
         "      tool_use:\n        - name: write_file\n          input: {path: \"code/{{loop_id}}.txt\", content: \"made by {{loop_id}}\\n\"}\n"
         "        - name: write_file\n          input: {path: \"wip/{{loop_id}}.txt\", content: \"done\\n\"}\n";
    return y;
  }
};

/// The smallest tree's script: a plan with one spec (alpha) of one phase, so one code loop.
inline TreeScript one_part_script() {
  TreeScript script;
  script.specs = {"alpha"};
  script.phases = 1;
  return script;
}

class DaemonFixture : public ::testing::Test {
 protected:
  TempDir dir{"loopr-daemon"};
  std::unique_ptr<MockLlm> mock;
  /// Variables the daemon sees differently from this process (nullopt: unset).
  std::map<std::string, std::optional<std::string>> env_overrides;
  pid_t daemon_pid = -1;
  /// `LOOPR_CRASH_AT` for the next daemon started (core/crash_point.hpp); empty: none.
  std::string crash_at;
  /// The daemon's web UI (DaemonOptions::web; the web tests give it), none by default.
  daemon::FrontEndFactory web_ui;

  RepoPaths paths() const { return RepoPaths(dir.path()); }
  daemon::Client client() const { return daemon::Client(paths().socket()); }

  /// The repository: `check.sh` fails while any `wip/*.txt` says WIP; `shared.txt` has 20 lines.
  void make_repo(const std::string& config_extra = {}, const std::string& merge = "auto") {
    std::string shared;
    for (int i = 1; i <= 20; ++i) shared += "line " + std::to_string(i) + "\n";
    write_file(dir / "shared.txt", shared);
    write_file(dir / "check.sh", "if grep -rqs WIP wip; then echo 'still WIP:'; grep -rl WIP wip; exit 1; fi\necho ok\n");
    write_file(dir / ".gitignore", ".loopr/state/\n.loopr/run/\n.loopr/worktrees/\n.loopr/archive/\n.loopr/logs/\n");
    auto init = git_init_commit_all(dir.path());
    ASSERT_EQ(init.exit_code, 0) << init.output;
    config_tail = config_extra;
    merge_mode = merge;
  }

  void start_mock(const TreeScript& script, std::vector<std::string> args = {}) {
    mock = std::make_unique<MockLlm>(script.yaml(), std::move(args));
    write_config();
  }

  /// How most tests start: the repository (make_repo with `config_extra`), the mock playing
  /// `script`, and the daemon.
  void start_tree_daemon(const TreeScript& script, const std::string& config_extra = {}) {
    make_repo(config_extra);
    start_mock(script);
    start_daemon();
  }

  void write_config() {
    std::string yaml = "base_branch: main\nmerge: " + merge_mode +
                       "\nllm:\n  provider: anthropic\n  model: claude-sonnet-5-5\n  base_url: " + mock->url() +
                       "\n  max_retries: 3\nconcurrency:\n  max_loops: 20\n  llm_slots: 16\n  requests_per_minute: 100000\n"
                       "loops:\n  code: {max_iterations: 6, validation: \"sh check.sh\", iteration_timeout: 1m}\n" +
                       config_tail;
    write_file(dir / ".loopr/config.yml", yaml);
  }

  /// Forks a child that runs the daemon; returns once `GET /v1/health` answers.
  void start_daemon() {
    std::string repo = dir.str();
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (crash_at.empty()) ::unsetenv("LOOPR_CRASH_AT");
      else ::setenv("LOOPR_CRASH_AT", crash_at.c_str(), 1);
      daemon::DaemonOptions options;
      options.repo = repo;
      options.web = web_ui;
      options.env = [overrides = env_overrides](const char* name) -> std::optional<std::string> {
        std::string n = name;
        if (auto it = overrides.find(n); it != overrides.end()) return it->second;
        if (n == "ANTHROPIC_API_KEY") return std::string("test-key");
        if (n.rfind("LOOPR_", 0) == 0 || n.rfind("ANTHROPIC_", 0) == 0 || n.rfind("OPENAI_", 0) == 0) return std::nullopt;
        const char* v = std::getenv(name);
        return v ? std::optional<std::string>(v) : std::nullopt;
      };
      auto r = daemon::run_daemon(options);
      if (!r) std::fprintf(stderr, "daemon: %s\n", r.error().message.c_str());
      _exit(r ? 0 : 1);
    }
    daemon_pid = pid;
    bool up = wait_until([&] {
      auto h = client().call("GET", "/v1/health", nullptr, std::chrono::seconds(2));
      return h && h->status == 200;
    }, std::chrono::seconds(20));
    ASSERT_TRUE(up) << "the daemon did not answer; log:\n" << tail_log();
  }

  /// SIGKILL, as a crash would.
  void kill_daemon() {
    if (daemon_pid <= 0) return;
    ::kill(daemon_pid, SIGKILL);
    int status = 0;
    ::waitpid(daemon_pid, &status, 0);
    daemon_pid = -1;
  }

  /// SIGTERM and wait; returns the child's exit status and how long it took.
  std::pair<int, std::chrono::milliseconds> stop_daemon() {
    auto t0 = std::chrono::steady_clock::now();
    ::kill(daemon_pid, SIGTERM);
    int status = 0;
    ::waitpid(daemon_pid, &status, 0);
    daemon_pid = -1;
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)};
  }

  void TearDown() override {
    if (daemon_pid > 0) {
      ::kill(daemon_pid, SIGTERM);
      bool gone = wait_until([&] { return ::waitpid(daemon_pid, nullptr, WNOHANG) == daemon_pid; }, std::chrono::seconds(8));
      if (!gone) kill_daemon();
      daemon_pid = -1;
    }
    if (!HasFailure() && !base_may_fail) {
      // Issue 15: whatever tree loopr merged into the base branch passes the base's tests.
      EXPECT_TRUE(base_passes()) << "the base branch's tests fail after loopr merged into it:\n"
                                 << git("log --oneline -5 main");
    }
    if (HasFailure()) std::cerr << "daemon log tail:\n" << tail_log() << "\n";
  }

  /// Set by a test that merges a failing tree on purpose (`merge --force`).
  bool base_may_fail = false;

  /// The base branch's `check.sh`, in a checkout of its own; true when loopr merged nothing
  /// into it (or it has no check.sh).
  bool base_passes() {
    if (!std::filesystem::exists(dir / ".git")) return true;
    if (git("log --format=%s main").find("loopr(") == std::string::npos) return true;
    if (git("cat-file -e main:check.sh").find("fatal") != std::string::npos) return true;
    std::string where = shell_quote(dir.str() + "-base-check");
    auto r = run_command("git worktree add -q --detach " + where + " main && cd " + where +
                             " && sh check.sh; rc=$?; cd " + shell_quote(dir.str()) +
                             " && git worktree remove --force " + where + "; exit $rc",
                         dir.str());
    return r.exit_code == 0;
  }

  std::string tail_log() const {
    auto r = run_command("tail -n 60 " + shell_quote((paths().logs_dir() / "daemon.log").string()) + " 2>&1");
    return r.output;
  }

  daemon::ClientResponse api(const std::string& method, const std::string& target, const nlohmann::json& body = nullptr) {
    auto r = client().call(method, target, body, std::chrono::seconds(30));
    EXPECT_TRUE(r.ok()) << method << " " << target << ": " << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : daemon::ClientResponse{};
  }

  std::map<std::string, nlohmann::json> loops(bool all = false) {
    auto r = client().call("GET", all ? "/v1/loops?all=true" : "/v1/loops", nullptr, std::chrono::seconds(30));
    std::map<std::string, nlohmann::json> out;
    if (!r || r->status != 200) return out;
    for (const auto& l : r->body["loops"]) out[l["id"].get<std::string>()] = l;
    return out;
  }

  std::string status_of(const std::string& id) {
    auto l = loops(true);
    return l.count(id) ? l[id]["status"].get<std::string>() : std::string("(none)");
  }

  /// Polls the loop list until `cond` holds.
  bool wait_loops(const std::function<bool(std::map<std::string, nlohmann::json>&)>& cond,
                  std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    return wait_until([&] {
      auto l = loops(true);
      return cond(l);
    }, timeout);
  }

  bool wait_status(const std::string& id, const std::string& status,
                   std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    return wait_loops([&](auto& l) { return l.count(id) && l[id]["status"] == status; }, timeout);
  }

  std::string dump_loops() {
    std::string s;
    for (auto& [id, l] : loops(true))
      s += id + " " + l["status"].get<std::string>() + " it=" + std::to_string(l["iteration"].get<int>()) + " " +
           l.value("status_reason", "") + "\n";
    return s;
  }

  std::string git(const std::string& args) { return run_command("git " + args + " 2>&1", dir.str()).output; }

  /// The repository passes `git fsck --strict`, and no loop's worktree outlives its tree: none
  /// registered with git, no folder left under `.loopr/worktrees`.
  void expect_sound_repo_and_no_worktree_left() {
    auto fsck = run_command("git fsck --strict", dir.str());
    EXPECT_EQ(fsck.exit_code, 0) << fsck.output;
    EXPECT_EQ(git("worktree list").find(".loopr/worktrees"), std::string::npos)
        << git("worktree list");
    std::error_code ec;
    std::size_t left = 0;
    for (auto it = std::filesystem::directory_iterator(paths().worktrees_dir(), ec);
         !ec && it != std::filesystem::directory_iterator(); ++it)
      ++left;
    EXPECT_EQ(left, 0u) << "stray worktree folders";
  }

  std::string submit(const std::string& request) {
    auto r = api("POST", "/v1/plans", {{"request", request}});
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", "");
  }

  /// Submits the first plan (001), waits for it at the gate and approves it. Call it inside
  /// ASSERT_NO_FATAL_FAILURE: a failed step ends the test.
  void submit_and_approve(const std::string& request) {
    submit(request);
    ASSERT_TRUE(wait_status("001", "awaiting_approval"));
    ASSERT_EQ(api("POST", "/v1/loops/001/approve").status, 200);
  }

 private:
  std::string config_tail;
  std::string merge_mode = "auto";
};

/// How many of `loops` (a loop list by id) have `status`.
inline std::size_t count_status(std::map<std::string, nlohmann::json>& loops,
                                const std::string& status) {
  std::size_t n = 0;
  for (auto& [id, l] : loops) n += l["status"] == status;
  return n;
}

/// How many of `loops` are of `type` and have `status`.
inline std::size_t count_type_status(std::map<std::string, nlohmann::json>& loops,
                                     const std::string& type, const std::string& status) {
  std::size_t n = 0;
  for (auto& [id, l] : loops) n += l["type"] == type && l["status"] == status;
  return n;
}

}  // namespace loopr::testing
