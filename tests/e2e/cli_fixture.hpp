// The real `loopr` binary against a real daemon it starts itself: a temp git repository with
// `.loopr/config.yml` pointing at the real `loopr-mock-llm`, commands run through `sh` with
// stdout and stderr kept apart. The daemon is stopped (or killed) after each test.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/git_repo.hpp"
#include "support/mock_llm.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "support/tree_artifacts.hpp"

namespace loopr::testing {

/// A mock-llm script that plays a whole tree: the plan names `specs`, each spec has one phase,
/// each phase one code loop that writes `code/<id>.txt`. A plan prompt that contains `trigger`
/// (the feedback of `iterate`) gets `iterated_specs` instead.
struct CliScript {
  std::vector<std::string> specs = {"alpha"};
  std::vector<std::string> iterated_specs = {"gamma", "delta"};
  std::string trigger = "USE-GAMMA";
  std::string plan_delay = "0ms";  ///< to watch a plan while it runs
  bool invalid_plan = false;       ///< the plan never passes its format check (it keeps iterating)

  static std::string plan(const std::vector<std::string>& names) {
    std::string s =
        "# Plan for the e2e test\n\n## Overview\nMake **files** with `code` in them.\n\n## "
        "Phases\n1. Write the files.\n\n"
        "## Success Criteria\n- check.sh passes.\n\n## Specs to Create\n";
    for (const auto& name : names) s += "- spec-" + name + ": Write the " + name + " files.\n";
    return s;
  }

  static std::string writer(const std::string& body) {
    return "      tool_use:\n        name: write_file\n        input:\n          path: "
           "\"{{first_user.1}}\"\n"
           "          content: |\n" +
           indent(body, 12);
  }

  std::string yaml() const {
    std::string delay = plan_delay == "0ms" ? "" : "      fault: {delay: " + plan_delay + "}\n";
    std::string y =
        "defaults:\n  usage: {input_tokens: 1000, output_tokens: 200}\n  thinking: false\nrules:\n";
    y += "  - name: finish\n    match: {turn: 2}\n    reply: {text: \"Done.\"}\n";
    y += "  - name: plan-iterated\n    match: {loop_type: plan, user: \"" + trigger +
         "\", first_user: \"`(\\\\.loopr/plans/[^`]+)`\"}\n    reply:\n" + delay +
         writer(plan(iterated_specs));
    y += "  - name: plan\n    match: {loop_type: plan, first_user: "
         "\"`(\\\\.loopr/plans/[^`]+)`\"}\n    reply:\n" +
         delay + writer(invalid_plan ? "# Not a plan\n\nNo sections at all.\n" : plan(specs));
    y += "  - name: spec\n    match: {loop_type: spec, first_user: "
         "\"`(\\\\.loopr/specs/[^`]+)`\"}\n    reply:\n" +
         writer(
             "# Spec {{loop_id}}\n\n## Parent Plan\nThe plan.\n\n## Overview\nFiles.\n\n## Phases\n"
             "1. **Part one**\n   Write part one.\n   - Files: code/x.txt\n");
    y += "  - name: phase\n    match: {loop_type: phase, first_user: "
         "\"`(\\\\.loopr/phases/[^`]+)`\"}\n    reply:\n" +
         writer(
             "# Phase {{loop_id}}\n\n## Parent Spec\nThe spec.\n\n## Task\nWrite the file.\n\n"
             "## Specific Work\n- Write it.\n\n## Success Criteria\n- check.sh passes.\n");
    y += "  - name: code\n    match: {loop_type: code}\n    reply:\n"
         "      tool_use:\n        - name: write_file\n          input: {path: "
         "\"code/{{loop_id}}.txt\", content: \"made by {{loop_id}}\\n\"}\n";
    return y;
  }
};

/// What one command printed, apart.
struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
  nlohmann::json json() const {
    auto j = nlohmann::json::parse(out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout is not one JSON document:\n"
                                   << out << "\nstderr:\n"
                                   << err;
    return j;
  }
};

/// Gone, or a zombie nobody reaped yet (a detached daemon or a backgrounded command belongs to
/// init, and not every container's init reaps at once).
inline bool process_gone(long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return true;
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

/// True if `path` exists on `branch` of the repository in `dir`.
inline bool on_branch(const std::string& dir, const std::string& branch, const std::string& path) {
  return run_command("git cat-file -e " + shell_quote(branch + ":" + path), dir).exit_code == 0;
}

class CliE2E : public ::testing::Test {
 protected:
  TempDir dir{"loopr-cli-e2e"};
  TempDir io{"loopr-cli-io"};
  std::unique_ptr<MockLlm> mock;

  /// The repository: `check.sh` passes (or, with `code_passes` false, always fails: then
  /// `baseline: off`, so that the code loops run and fail).
  void make_repo(const CliScript& script = {}, const std::string& merge = "auto",
                 bool code_passes = true) {
    make_repo_with(script.yaml(),
                   code_passes ? "echo ok\n" : "echo 'the test fails on purpose'; exit 1\n",
                   "merge: " + merge + (code_passes ? "" : "\nbaseline: off") +
                       "\nlimits:\n  no_progress_iterations: 2\nloops:\n  code: {max_iterations: 2, "
                       "validation: \"sh check.sh\", iteration_timeout: 1m}\n");
  }

  /// The repository with mock-llm script `yaml`, `check.sh` holding `check`, and `tail` (config
  /// keys besides base_branch, llm and concurrency) at the end of `.loopr/config.yml`.
  void make_repo_with(const std::string& yaml, const std::string& check, const std::string& tail) {
    write_file(dir / "check.sh", check);
    write_file(dir / ".gitignore",
               ".loopr/state/\n.loopr/run/\n.loopr/worktrees/\n.loopr/archive/\n.loopr/logs/\n");
    mock = std::make_unique<MockLlm>(yaml);
    write_file(dir / ".loopr/config.yml",
               "base_branch: main\nllm:\n  provider: anthropic\n  model: claude-sonnet-5-5\n  base_url: " +
                   mock->url() +
                   "\n  max_retries: 2\nconcurrency:\n  max_loops: 20\n  llm_slots: 8\n  "
                   "requests_per_minute: 100000\n" +
                   tail);
    auto init = git_init_commit_all(dir.path());
    ASSERT_EQ(init.exit_code, 0) << init.output;
  }

  /// The environment every loopr command (and so the daemon it starts) runs with.
  static std::string env_prefix() {
    return "env -u LOOPR_PROVIDER -u LOOPR_MODEL -u LOOPR_LOG -u ANTHROPIC_BASE_URL -u "
           "OPENAI_BASE_URL "
           "-u OPENAI_API_KEY ANTHROPIC_API_KEY=test ";
  }

  std::string loopr_command(const std::string& args) const {
    return env_prefix() + shell_quote(LOOPR_BIN) + " -C " + shell_quote(dir.str()) + " " + args;
  }

  /// `loopr -C REPO args` with `input` on stdin; at most `timeout_s` seconds.
  CliRun loopr(const std::string& args, const std::string& input = "", int timeout_s = 120) {
    write_file(io / "in", input);
    auto r =
        run_command("timeout " + std::to_string(timeout_s) + " " + loopr_command(args) + " < " +
                    shell_quote((io / "in").string()) + " > " + shell_quote((io / "out").string()) +
                    " 2> " + shell_quote((io / "err").string()));
    CliRun out{r.exit_code, read_file(io / "out"), read_file(io / "err")};
    return out;
  }

  /// The loops of `loopr --json list --all`, by id.
  std::map<std::string, nlohmann::json> loops() {
    std::map<std::string, nlohmann::json> out;
    CliRun r = loopr("--json list --all");
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    if (j.is_discarded()) return out;
    for (const auto& l : j["loops"]) out[l["id"].get<std::string>()] = l;
    return out;
  }

  bool wait_status(const std::string& id, const std::string& status,
                   std::chrono::seconds timeout = std::chrono::seconds(60)) {
    return wait_until(
        [&] {
          auto l = loops();
          return l.count(id) && l[id]["status"] == status;
        },
        timeout);
  }

  /// `loopr submit <args>`, then `loopr approve 001` once the plan waits at the gate. Call it in
  /// ASSERT_NO_FATAL_FAILURE.
  void submit_and_approve(const std::string& args) {
    ASSERT_EQ(loopr("submit " + args).exit_code, 0);
    ASSERT_TRUE(wait_status("001", "awaiting_approval"));
    ASSERT_EQ(loopr("approve 001").exit_code, 0);
  }

  std::string git(const std::string& args) {
    return run_command("git " + args + " 2>&1", dir.str()).output;
  }

  long daemon_pid() {
    std::ifstream in(dir / ".loopr/run/loopr.pid");
    long pid = 0;
    in >> pid;
    return pid;
  }

  void TearDown() override {
    if (!std::filesystem::exists(dir / ".loopr/run")) return;
    CliRun stop = loopr("daemon stop", "", 30);
    if (stop.exit_code != 0 && stop.exit_code != 3) {
      long pid = daemon_pid();
      if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
    }
    if (HasFailure()) {
      std::cerr << "daemon.out:\n"
                << run_command("tail -n 30 " +
                               shell_quote((dir / ".loopr/logs/daemon.out").string()))
                       .output;
      std::cerr << "daemon.log:\n"
                << run_command("tail -n 60 " +
                               shell_quote((dir / ".loopr/logs/daemon.log").string()))
                       .output;
    }
  }
};

}  // namespace loopr::testing
