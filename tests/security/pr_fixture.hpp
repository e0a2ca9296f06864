// `merge: pr` through the real binaries: the escape suite's world (a repository, a home, secrets
// in the environment, a scripted mock model) plus a real bare remote the integration branch is
// pushed to over the local transport (a plain path) and loopr-mock-forge as GitHub, which reads
// the pushed heads from that remote. The token is the escape suite's GITHUB_TOKEN marker: the
// forge double accepts only it, and it must show up nowhere else.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "security/escape_fixture.hpp"
#include "support/mock_forge.hpp"

namespace loopr::testing {

class PullRequestTest : public EscapeTest {
 protected:
  fs::path bare;
  std::unique_ptr<MockForge> forge;
  /// The forge double's script: by default the first head fails its `test` check run (with an
  /// output the fix loop must be given), the next ones pass.
  nlohmann::json forge_script = {
      {"repo", "acme/widgets"},
      {"ci",
       {{{"pending_polls", 1},
         {"check_runs",
          {{{"name", "test"},
            {"conclusion", "failure"},
            {"output",
             {{"title", "1 test failed"},
              {"summary", "test_sum fails on CI"},
              {"text", "CI-FAILURE-OUTPUT-7a1: expected 3, got 4"}}}}}}},
        {{"check_runs", {{{"name", "test"}, {"conclusion", "success"}}}}}}}};
  std::string ci = "{wait: true, timeout: 5m, fix_iterations: 2, poll_max: 1s}";

  void SetUp() override {
    EscapeTest::SetUp();
    if (HasFatalFailure()) return;
    if (!MockForge::available()) GTEST_SKIP() << "loopr-mock-forge is not built";
    bare = repo.parent_path() / "remote" / "acme" / "widgets.git";
    // The remote is a plain path (git's local transport); OWNER/NAME comes from it.
    auto made = run_command("git init -q --bare " + shell_quote(bare.string()) +
                                " && git remote set-url origin " + shell_quote(bare.string()),
                            repo.string());
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }

  void TearDown() override {
    if (HasFailure() && forge) {
      std::cerr << "forge requests:\n";
      for (const auto& r : forge->requests()) std::cerr << r.dump() << "\n";
      std::cerr << "forge output:\n" << forge->output() << "\n";
    }
    EscapeTest::TearDown();
  }

  /// The forge double, then the config with `merge: pr` and `forge:` (committed).
  void prepare_pr() {
    forge = std::make_unique<MockForge>(forge_script, kTokenMarker, bare.string());
    extra_config += "forge:\n  kind: github\n  api_url: " + forge->url() +
                    "\n  remote: origin\n  token_env: GITHUB_TOKEN\n  ci: " + ci + "\n";
    prepare();
    auto set = run_command(
        "sed -i 's/^merge: auto$/merge: pr/' .loopr/config.yml && git commit -qam 'merge: pr'",
        repo.string());
    ASSERT_EQ(set.exit_code, 0) << set.output;
    config_before = read_file(repo / ".loopr/config.yml");
  }

  /// A loop as the daemon's API has it, with a plan's tree fields (`tree_verdict`,
  /// `merge_error`, `pr`): `show --json` is INTERFACE.md's shape (plus `pr`), which has not all.
  nlohmann::json show(const std::string& id = "001") {
    auto r = run_command("curl -s -m 30 --unix-socket " +
                         shell_quote((repo / ".loopr/run/loopr.sock").string()) +
                         " http://loopr/v1/loops/" + id);
    return nlohmann::json::parse(r.output, nullptr, false);
  }
  nlohmann::json all_loops() {
    auto j = nlohmann::json::parse(loopr("list --all --json", 60), nullptr, false);
    return j.is_object() ? j.value("loops", nlohmann::json::array()) : nlohmann::json::array();
  }
  std::vector<nlohmann::json> fix_loops() {
    std::vector<nlohmann::json> out;
    for (const auto& l : all_loops())
      if (l.value("id", std::string()).rfind("fix-", 0) == 0) out.push_back(l);
    return out;
  }
  std::string remote_tip(const std::string& plan = "001") {
    return run_command("git --git-dir " + shell_quote(bare.string()) + " rev-parse refs/heads/loopr/" +
                       plan)
        .output;
  }
  std::string local(const std::string& ref) {
    return run_command("git rev-parse " + ref, repo.string()).output;
  }
  /// Everything the first prompt of `loop`'s iteration `n` held.
  std::string prompt(const std::string& loop, int n = 1) const {
    char num[8];
    std::snprintf(num, sizeof num, "%03d", n);
    return read_file(repo / ".loopr/logs/loops" / loop / "iterations" / num / "prompt.md");
  }
  /// Waits (generously) until `show 001 --json` satisfies `done`; the last answer (a failure
  /// says what was seen).
  nlohmann::json wait_for_plan(const std::function<bool(const nlohmann::json&)>& done,
                               const std::string& what, int seconds = 300) {
    nlohmann::json seen;
    bool got = wait_until(
        [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
          seen = show();
          return seen.is_object() && done(seen);
        },
        std::chrono::seconds(seconds));
    if (!got) ADD_FAILURE() << "the plan never " << what << "; last seen " << seen.dump();
    return seen;
  }
  /// Waits until the plan's `pr` says `checks` (and the tree is not running).
  bool wait_for_checks(const std::string& checks) {
    nlohmann::json seen = wait_for_plan(
        [&](const nlohmann::json& p) {
          return p["pr"].is_object() && p["pr"]["checks"] == checks &&
                 p.value("tree_verdict", std::string()) != "running";
        },
        "had checks " + checks);
    return seen["pr"].is_object() && seen["pr"]["checks"] == checks;
  }
};

}  // namespace loopr::testing
