// `merge: pr` end to end (issue 45): the real daemon with loopr-mock-llm as the model, a real
// bare remote and loopr-mock-forge as GitHub. The tree's integration branch is pushed and a PR
// opened; the failing check's output becomes a CI fix loop's feedback; its commit is pushed and
// the checks pass; the local base branch is untouched; review comments come back through
// `loopr iterate --from-pr` and the web page's button that makes the same call; a push failure is
// an event and a state `loopr merge` retries.
#include <regex>

#include "security/pr_fixture.hpp"

namespace loopr::testing {
namespace {

TEST_F(PullRequestTest, OpensThePrFixesTheFailingCheckAndTakesCommentsBack) {
  prepare_pr();
  const std::string main_before = local("main");
  submit();
  EXPECT_EQ(submit_exit, 0) << submit_output;
  EXPECT_NE(submit_output.find("pull request #1"), std::string::npos) << submit_output;
  ASSERT_TRUE(wait_for_checks("passed"));
  nlohmann::json plan = show();
  EXPECT_EQ(plan["tree_verdict"], "complete") << plan.dump();
  EXPECT_EQ(plan["pr"]["number"], 1);
  EXPECT_EQ(plan["pr"]["url"], "https://github.com/acme/widgets/pull/1");
  EXPECT_EQ(plan["pr"]["state"], "open");
  EXPECT_EQ(plan["pr"]["ci_fix_loops"], 1);
  // `show --json` (INTERFACE.md's shape) carries the plan's `pr` too.
  auto shown = nlohmann::json::parse(loopr("show 001 --json", 60), nullptr, false);
  ASSERT_TRUE(shown.is_object());
  EXPECT_EQ(shown["pr"]["number"], 1) << shown.dump();
  EXPECT_EQ(shown["pr"]["url"], "https://github.com/acme/widgets/pull/1");
  // The CI fix loop is a code loop of the plan; the failed check's output was its feedback.
  auto fixes = fix_loops();
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0]["type"], "code");
  EXPECT_EQ(fixes[0]["status"], "complete");
  EXPECT_NE(prompt(fixes[0]["id"]).find("CI-FAILURE-OUTPUT-7a1"), std::string::npos);
  // Pushed twice (the tree, then the fix): the remote branch is the local integration branch.
  EXPECT_EQ(remote_tip(), local("loopr/001"));
  EXPECT_EQ(forge->state()["ci_shas"].size(), 2u) << forge->state().dump();
  // The PR: head loopr/001 into main, titled after the plan, a body with the tree and the cost.
  nlohmann::json pr = forge->state()["pulls"][0];
  EXPECT_EQ(pr["head"]["ref"], "loopr/001");
  EXPECT_EQ(pr["base"]["ref"], "main");
  const std::string body = pr["body"];
  for (const char* part : {"## Summary", "Write the file", "code-001-001-001", "## Cost", "## Validated", "sh check.sh"})
    EXPECT_NE(body.find(part), std::string::npos) << part << " is not in the body:\n" << body;
  // The local base branch is the team's: untouched.
  EXPECT_EQ(local("main"), main_before);
  // `show` prints the address.
  EXPECT_NE(loopr("show 001").find("https://github.com/acme/widgets/pull/1"), std::string::npos);

  // Review comments made after the last push come back to a fix loop, whose work is pushed.
  const std::string before_review = remote_tip();
  forge->add_comments(1, nlohmann::json::array({{{"path", "code/code-001-001-001.txt"},
                                                  {"line", 1},
                                                  {"body", "REVIEW-NOTE-3b9: say it louder"}}}));
  std::string review = loopr("review 001");
  EXPECT_NE(review.find("REVIEW-NOTE-3b9"), std::string::npos) << review;
  // Plain `loopr review` lists them too, with what takes them to a fix loop.
  std::string everything = loopr("review");
  EXPECT_EQ(submit_exit, 0) << everything;
  EXPECT_NE(everything.find("REVIEW-NOTE-3b9"), std::string::npos) << everything;
  EXPECT_NE(everything.find("loopr iterate 001 --from-pr"), std::string::npos) << everything;
  std::string iterated = loopr("iterate 001 --from-pr");
  ASSERT_EQ(submit_exit, 0) << iterated;
  EXPECT_TRUE(wait_until(
      [&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        return fix_loops().size() == 2 && remote_tip() != before_review;
      },
      std::chrono::seconds(240)))
      << loopr("list --all");
  ASSERT_TRUE(wait_for_checks("passed"));
  fixes = fix_loops();
  ASSERT_EQ(fixes.size(), 2u);
  EXPECT_NE(prompt(fixes[1]["id"]).find("REVIEW-NOTE-3b9"), std::string::npos);
  EXPECT_NE(prompt(fixes[1]["id"]).find("code/code-001-001-001.txt:1"), std::string::npos);
  EXPECT_EQ(remote_tip(), local("loopr/001"));
  EXPECT_EQ(local("main"), main_before);
  // Nothing new since that push: said, not a fix loop for nothing.
  std::string again = loopr("iterate 001 --from-pr");
  EXPECT_NE(submit_exit, 0) << again;
  EXPECT_NE(again.find("no review comments"), std::string::npos) << again;

  // The web page lists the next comment and gives it to a fix loop: `iterate --from-pr`'s call.
  const std::string before_page = remote_tip();
  forge->add_comments(1, nlohmann::json::array({{{"path", "code/code-001-001-001.txt"},
                                                  {"line", 1},
                                                  {"body", "REVIEW-NOTE-5c2: and in capitals"}}}));
  std::smatch web;
  const std::string started = loopr("-q web");
  ASSERT_TRUE(std::regex_search(started, web,
                                std::regex(R"((http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]{64}))")))
      << started;
  const std::string base = web[1], token = web[2];
  const std::string page = run_command("curl -s -m 60 " + shell_quote(base + "/loop/001?token=" + token)).output;
  EXPECT_NE(page.find("REVIEW-NOTE-5c2"), std::string::npos) << page;
  EXPECT_NE(page.find("action=\"/loop/001/from-pr\""), std::string::npos) << page;
  const std::string posted =
      run_command("curl -s -m 60 -o /dev/null -w '%{http_code}' -H " +
                  shell_quote("Origin: " + base) + " --data " +
                  shell_quote("token=" + token + "&back=loop") + " " + shell_quote(base + "/loop/001/from-pr"))
          .output;
  EXPECT_EQ(posted, "303");
  EXPECT_TRUE(wait_until(
      [&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        return fix_loops().size() == 3 && remote_tip() != before_page;
      },
      std::chrono::seconds(240)))
      << loopr("list --all");
  ASSERT_TRUE(wait_for_checks("passed"));
  fixes = fix_loops();
  ASSERT_EQ(fixes.size(), 3u);
  EXPECT_NE(prompt(fixes[2]["id"]).find("REVIEW-NOTE-5c2"), std::string::npos);
  EXPECT_EQ(prompt(fixes[2]["id"]).find("REVIEW-NOTE-3b9"), std::string::npos) << "only the new one";
  // Every request told GitHub who it is and which API version it speaks, with the token.
  for (const auto& r : forge->requests()) {
    if (r["path"].get<std::string>().rfind("/_mock/", 0) == 0) continue;
    EXPECT_EQ(r["headers"]["x-github-api-version"], "2022-11-28") << r.dump();
    EXPECT_EQ(r["headers"]["accept"], "application/vnd.github+json") << r.dump();
    EXPECT_EQ(r["headers"]["authorization"], "[token]") << r.dump();
    EXPECT_TRUE(r["headers"].contains("user-agent")) << r.dump();
  }
  expect_no_secret_anywhere();
}

TEST_F(PullRequestTest, APushFailureIsAStateThatMergeRetries) {
  prepare_pr();
  // The remote cannot take the push: a file where the repository should be.
  run_command("git remote set-url origin " + shell_quote((bare.parent_path() / "missing.git").string()),
              repo.string());
  submit();
  EXPECT_NE(submit_exit, 0) << submit_output;
  nlohmann::json plan = show();
  EXPECT_EQ(plan["status"], "blocked") << plan.dump();
  EXPECT_EQ(plan["end_reason"], "forge_failed") << plan.dump();
  EXPECT_EQ(plan["tree_verdict"], "merge_failed") << plan.dump();
  EXPECT_NE(plan["status_reason"].get<std::string>().find("loopr merge 001"), std::string::npos);
  EXPECT_NE(plan["pr"]["error"].get<std::string>().find("git push"), std::string::npos);
  auto events = run_command("grep -h forge_failed " + shell_quote((repo / ".loopr/logs").string()) +
                            " -r | head -1");
  EXPECT_NE(events.output.find("\"step\":\"push\""), std::string::npos) << events.output;
  // Nothing lost: fix the remote, `loopr merge` pushes and opens the PR.
  run_command("git remote set-url origin " + shell_quote(bare.string()), repo.string());
  std::string merged = loopr("merge 001");
  EXPECT_EQ(submit_exit, 0) << merged;
  ASSERT_TRUE(wait_for_checks("passed"));
  EXPECT_EQ(remote_tip(), local("loopr/001"));
  EXPECT_EQ(show()["status"], "complete");
}

TEST_F(PullRequestTest, ChecksThatKeepFailingHoldThePlanNamingTheCheck) {
  forge_script["ci"] = nlohmann::json::array(
      {{{"check_runs", {{{"name", "lint"}, {"conclusion", "failure"},
                         {"output", {{"title", "style"}, {"summary", "LINT-FAIL-22"}}}}}}}});
  ci = "{wait: true, timeout: 5m, fix_iterations: 1, poll_max: 1s}";
  prepare_pr();
  submit();
  nlohmann::json seen = wait_for_plan(
      [](const nlohmann::json& p) { return p.value("end_reason", std::string()) == "ci_failed"; },
      "was held for its CI");
  EXPECT_EQ(seen["status"], "blocked");
  EXPECT_EQ(seen["tree_verdict"], "integration_failed");
  EXPECT_NE(seen["status_reason"].get<std::string>().find("lint"), std::string::npos) << seen.dump();
  EXPECT_EQ(seen["pr"]["checks"], "failed");
  EXPECT_EQ(fix_loops().size(), 1u);  // ci.fix_iterations: 1
}

}  // namespace
}  // namespace loopr::testing

namespace loopr::testing {
namespace {

nlohmann::json doctor_check(const nlohmann::json& report, const std::string& name) {
  for (const auto& c : report.value("checks", nlohmann::json::array()))
    if (c.value("name", std::string()) == name) return c;
  return nullptr;
}

TEST_F(PullRequestTest, DoctorChecksTheRemoteTheTokenAndTheApi) {
  prepare_pr();
  auto report = nlohmann::json::parse(loopr("doctor --skip-tests --json", 120), nullptr, false);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(doctor_check(report, "remote")["status"], "ok") << report.dump();
  EXPECT_EQ(doctor_check(report, "forge token")["status"], "ok") << report.dump();
  EXPECT_EQ(doctor_check(report, "forge api")["status"], "ok") << report.dump();
  EXPECT_NE(doctor_check(report, "forge api")["message"].get<std::string>().find("acme/widgets"),
            std::string::npos);
  EXPECT_EQ(report.dump().find(kTokenMarker), std::string::npos);
  // Without the token's variable and without the remote: said, with what to do.
  run_command("git remote remove origin", repo.string());
  auto bare_env = run_command("timeout 120 env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=" +
                              shell_quote(home.string()) + " " + shell_quote(LOOPR_BIN) + " -C " +
                              shell_quote(repo.string()) + " doctor --skip-tests --json 2>/dev/null");
  auto missing = nlohmann::json::parse(bare_env.output, nullptr, false);
  ASSERT_TRUE(missing.is_object()) << bare_env.output;
  EXPECT_EQ(doctor_check(missing, "remote")["status"], "fail") << missing.dump();
  EXPECT_EQ(doctor_check(missing, "forge token")["status"], "fail") << missing.dump();
  EXPECT_NE(doctor_check(missing, "forge token")["message"].get<std::string>().find("GITHUB_TOKEN"),
            std::string::npos);
  EXPECT_FALSE(missing.value("ready", true));
}

}  // namespace
}  // namespace loopr::testing
