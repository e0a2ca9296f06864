// `merge: pr` against the forge's moves (issue 45): the team merges or closes the PR, CI keeps
// polling with backoff under the forge's rate limit, gives no verdict in time, or the API
// refuses to open the PR. The real daemon, loopr-mock-llm as the model, a real bare remote and
// loopr-mock-forge as GitHub (its request log has each request's time). Spacing of polls is
// checked loosely: lower bounds, and upper bounds only far from what the code waits.
#include <algorithm>
#include <chrono>

#include "security/pr_fixture.hpp"

namespace loopr::testing {
namespace {

using nlohmann::json;

const json kPassing = json::array({{{"check_runs", {{{"name", "test"}, {"conclusion", "success"}}}}}});
const json kPendingForever =
    json::array({{{"pending_polls", 100000}, {"check_runs", {{{"name", "test"}}}}}});

class PullRequestForgeTest : public PullRequestTest {
 protected:
  /// The forge's requests whose path starts with `path` (GitHub's, under /repos/acme/widgets).
  std::vector<json> requests_to(const std::string& path, const std::string& method = "GET") {
    std::vector<json> out;
    for (const auto& r : forge->requests())
      if (r.value("method", std::string()) == method &&
          r.value("path", std::string()).rfind("/repos/acme/widgets" + path, 0) == 0)
        out.push_back(r);
    return out;
  }
  std::size_t pr_reads() { return requests_to("/pulls/1").size(); }
  /// Every line of the plan's events.log (`TIME #SEQ TYPE {data}`) of `type`.
  std::string events_of(const std::string& type) {
    return run_command("grep -h ' " + type + " {' " +
                       shell_quote((repo / ".loopr/logs/loops/001/events.log").string()))
        .output;
  }
};

TEST_F(PullRequestForgeTest, ThePrsStateFollowsTheForgeWithoutAForgeCallPerView) {
  forge_script["ci"] = kPassing;
  ci = "{wait: true, timeout: 5m, fix_iterations: 1, poll_max: 20s}";
  prepare_pr();
  submit();
  ASSERT_TRUE(wait_for_checks("passed"));
  EXPECT_EQ(show()["pr"]["state"], "open");
  // Views show what is stored; the forge is asked at most once per ci.poll_max (20 s).
  const std::size_t before = pr_reads();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 8; ++i) show();
  const auto secs =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LE(pr_reads() - before, static_cast<std::size_t>(1 + secs / 20))
      << "8 views in " << secs << " s";
  // The team merges it on the forge: the views after say so.
  forge->set_pull_state(1, "merged");
  json seen = wait_for_plan(
      [](const json& p) { return p["pr"].is_object() && p["pr"]["state"] == "merged"; },
      "saw its PR merged", 180);
  EXPECT_EQ(seen["tree_verdict"], "complete") << seen.dump();
  EXPECT_NE(loopr("show 001").find("pull request #1 merged on the forge"), std::string::npos)
      << loopr("show 001");
  EXPECT_NE(events_of("pr_state").find("\"state\":\"merged\""), std::string::npos)
      << events_of("pr_state");
  // A PR that is no longer open is not asked about again.
  const std::size_t settled = pr_reads();
  for (int i = 0; i < 3; ++i) show();
  EXPECT_EQ(pr_reads(), settled);
}

TEST_F(PullRequestForgeTest, APrMergedWhileItsChecksRunEndsTheWait) {
  forge_script["ci"] = kPendingForever;
  prepare_pr();
  // Not `submit --wait`: that waits for CI's verdict, which never comes here.
  loopr("submit " + shell_quote("Write the file"));
  wait_for_plan([](const json& p) { return p.value("status", std::string()) == "awaiting_approval"; },
                "reached its gate");
  loopr("approve 001");
  wait_for_plan([&](const json&) { return !requests_to("/commits/").empty(); }, "was polled");
  forge->set_pull_state(1, "merged");
  json seen = wait_for_plan(
      [](const json& p) { return p.value("tree_verdict", std::string()) == "complete"; },
      "ended its wait");
  EXPECT_EQ(seen["status"], "complete") << seen.dump();
  EXPECT_EQ(seen["pr"]["state"], "merged") << seen.dump();
  EXPECT_EQ(seen["pr"]["checks"], "skipped") << seen.dump();
  EXPECT_TRUE(fix_loops().empty());
  // No more polls once the wait ended (a generous look: several poll_max of 1 s).
  const std::size_t polls = requests_to("/commits/").size();
  std::this_thread::sleep_for(std::chrono::seconds(4));
  EXPECT_EQ(requests_to("/commits/").size(), polls);
}

// The documented outcome of ci.timeout, and `loopr merge` of a plan whose PR the team merged.
TEST_F(PullRequestForgeTest, NoVerdictWithinTheTimeoutHoldsThePlanAndMergeSeesTheTeamsMerge) {
  forge_script["ci"] = kPendingForever;
  ci = "{wait: true, timeout: 5s, fix_iterations: 2, poll_max: 1s}";
  prepare_pr();
  submit();
  json seen = wait_for_plan(
      [](const json& p) { return p.value("end_reason", std::string()) == "ci_failed"; },
      "was held for its CI");
  EXPECT_EQ(seen["status"], "blocked");
  EXPECT_EQ(seen["tree_verdict"], "integration_failed");
  EXPECT_EQ(seen["pr"]["checks"], "failed");
  EXPECT_NE(seen["status_reason"].get<std::string>().find("no verdict within forge.ci.timeout"),
            std::string::npos)
      << seen.dump();
  EXPECT_NE(seen["status_reason"].get<std::string>().find("loopr merge 001"), std::string::npos);
  EXPECT_TRUE(fix_loops().empty()) << "a timeout is no check output to fix";
  EXPECT_NE(events_of("ci_checked").find("\"state\":\"timeout\""), std::string::npos);
  // `show` says it is the forge's CI, not the integration branch's tests.
  std::string text = loopr("show 001");
  EXPECT_NE(text.find("the forge's CI fails on pull request #1"), std::string::npos) << text;
  EXPECT_EQ(text.find("the integration branch fails its tests"), std::string::npos) << text;
  // The team merged it anyway: `loopr merge` asks the forge, pushes nothing and settles.
  const std::string tip = remote_tip();
  forge->set_pull_state(1, "merged");
  std::string merged = loopr("merge 001");
  EXPECT_EQ(submit_exit, 0) << merged;
  EXPECT_NE(merged.find("was merged on the forge"), std::string::npos) << merged;
  json after = show();
  EXPECT_EQ(after["status"], "complete") << after.dump();
  EXPECT_EQ(after["tree_verdict"], "complete") << after.dump();
  EXPECT_EQ(after["pr"]["state"], "merged");
  EXPECT_EQ(remote_tip(), tip);
  EXPECT_EQ(requests_to("/pulls", "POST").size(), 1u);
}

// Backoff (1 s, then twice as long), the ci.poll_max cap, and the forge's rate limit (429 with
// retry-after; 403 with x-ratelimit-remaining: 0 until x-ratelimit-reset) winning over it.
TEST_F(PullRequestForgeTest, PollsBackOffUpToPollMaxAndWaitOutTheRateLimit) {
  forge_script["ci"] = json::array(
      {{{"pending_polls", 6}, {"check_runs", {{{"name", "test"}, {"conclusion", "success"}}}}}});
  forge_script["faults"] = json::array(
      {{{"path", "/check-runs$"}, {"skip", 3}, {"status", 429}, {"retry_after", 6}},
       {{"path", "/check-runs$"}, {"skip", 5}, {"status", 403}, {"rate_limit", true},
        {"reset_in", 6}}});
  ci = "{wait: true, timeout: 10m, fix_iterations: 1, poll_max: 4s}";
  prepare_pr();
  submit();
  ASSERT_TRUE(wait_for_checks("passed"));
  std::vector<json> runs = requests_to("/commits/");
  runs.erase(std::remove_if(runs.begin(), runs.end(),
                            [](const json& r) {
                              return r["path"].get<std::string>().find("/check-runs") ==
                                     std::string::npos;
                            }),
             runs.end());
  // r1-r3 pending, r4 429, r5-r6 pending, r7 403 rate limit, r8 pending, r9 passes.
  ASSERT_EQ(runs.size(), 9u);
  std::vector<int> status;
  std::vector<std::int64_t> gap;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    status.push_back(runs[i]["status"].get<int>());
    if (i > 0) gap.push_back(runs[i]["time_ms"].get<std::int64_t>() - runs[i - 1]["time_ms"].get<std::int64_t>());
  }
  EXPECT_EQ(status, (std::vector<int>{200, 200, 200, 429, 200, 200, 403, 200, 200}));
  std::string seen;
  for (auto g : gap) seen += std::to_string(g) + " ";
  // gap[i] is between run i+1 and run i+2 (1-based). Backoff: at least 2 s, then 4 s.
  EXPECT_GE(gap[0], 1900) << seen;
  EXPECT_GE(gap[1], 3900) << seen;
  // The forge's word wins over poll_max (4 s): retry-after 6 s, then the reset ~6 s away.
  EXPECT_GE(gap[3], 5900) << seen;
  EXPECT_GE(gap[6], 4900) << seen;
  // After a rate-limited wait the next one is poll_max again (4 s), not twice the wait (12 s).
  EXPECT_LT(gap[4], 10000) << seen;
  EXPECT_LT(gap[7], 10000) << seen;
}

TEST_F(PullRequestForgeTest, ApiFailuresOpeningThePrAreAStateThatMergeRetries) {
  forge_script["ci"] = kPassing;
  forge_script["faults"] = json::array(
      {{{"method", "POST"}, {"path", "/pulls$"}, {"status", 422}, {"message", "Validation Failed"}}});
  prepare_pr();
  submit();
  auto expect_forge_failed = [&](int status, const std::string& words) {
    json plan = show();
    EXPECT_EQ(plan["status"], "blocked") << plan.dump();
    EXPECT_EQ(plan["end_reason"], "forge_failed") << plan.dump();
    const std::string error = plan["pr"].is_object() && plan["pr"]["error"].is_string()
                                  ? plan["pr"]["error"].get<std::string>()
                                  : "";
    EXPECT_NE(error.find(std::to_string(status)), std::string::npos) << plan.dump();
    EXPECT_NE(error.find(words), std::string::npos) << plan.dump();
    EXPECT_NE(plan["status_reason"].get<std::string>().find("loopr merge 001"), std::string::npos);
    EXPECT_NE(events_of("forge_failed").find("\"status\":" + std::to_string(status)),
              std::string::npos)
        << events_of("forge_failed");
  };
  EXPECT_NE(submit_exit, 0) << submit_output;
  expect_forge_failed(422, "Validation Failed");
  EXPECT_NE(events_of("forge_failed").find("\"step\":\"open_pr\""), std::string::npos);
  // The next request refused for the token, then one rate limited: each retry says why.
  forge->add_faults(json::array({{{"path", ".*"}, {"status", 401}, {"message", "Bad credentials"}}}));
  std::string out = loopr("merge 001");
  EXPECT_NE(submit_exit, 0) << out;
  EXPECT_NE(out.find("token was refused"), std::string::npos) << out;
  expect_forge_failed(401, "Bad credentials");
  forge->add_faults(json::array({{{"path", ".*"}, {"status", 403}, {"rate_limit", true}, {"reset_in", 30}}}));
  out = loopr("merge 001");
  EXPECT_NE(submit_exit, 0) << out;
  EXPECT_NE(out.find("rate limited"), std::string::npos) << out;
  expect_forge_failed(403, "rate limit");
  // Nothing lost: the next retry opens the PR, CI passes, the base is untouched.
  const std::string main_before = local("main");
  out = loopr("merge 001");
  EXPECT_EQ(submit_exit, 0) << out;
  EXPECT_NE(out.find("pull request #1"), std::string::npos) << out;
  ASSERT_TRUE(wait_for_checks("passed"));
  EXPECT_EQ(show()["status"], "complete");
  EXPECT_EQ(remote_tip(), local("loopr/001"));
  EXPECT_EQ(local("main"), main_before);
  EXPECT_EQ(forge->state()["pulls"].size(), 1u);
}

}  // namespace
}  // namespace loopr::testing
