// A request's own limits through the real binary: `submit
// --max-cost/--max-runtime/--max-iterations` are stored with the plan, shown at the gate, kept by
// `iterate`, and the cost limit is checked between model turns: an iteration of many expensive
// turns ends after the turn that crossed it, its work checkpointed, the loop failed with end_reason
// `cost_limit` (no fresh retry: the tree's money is spent) under `limits.at_cost_limit: fail`;
// cost_limit_test.cpp has the default, `pause`.
#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;
using nlohmann::json;

namespace {

// The e2e tree with every code loop's model turn costing $2 (a million input tokens of
// claude-sonnet-5-5 at $2/MTok) and asking for another turn (it writes one file per turn).
std::string costly_code_script() {
  std::string y = CliScript{}.yaml();
  const std::string rules = "rules:\n";
  const std::string costly =
      "  - name: costly-code\n    match: {loop_type: code}\n    reply:\n"
      "      usage: {input_tokens: 1000000, output_tokens: 0}\n"
      "      tool_use:\n        - name: write_file\n          input: {path: "
      "\"code/turn-{{turn}}.txt\", content: \"turn {{turn}}\\n\"}\n";
  return y.insert(y.find(rules) + rules.size(), costly);
}

}  // namespace

class BudgetE2E : public CliE2E {
 protected:
  json show(const std::string& id) {
    CliRun r = loopr("--json show " + id);
    auto j = json::parse(r.out, nullptr, false);
    return j.is_discarded() ? json::object() : j;
  }
};

TEST_F(BudgetE2E, ARequestsCostCapEndsTheIterationAfterTheTurnThatCrossesIt) {
  // limits.max_cost_usd stays the default $25: only the request's $5 can stop it this early.
  make_repo_with(
      costly_code_script(), "echo ok\n",
      "limits:\n  no_progress_iterations: 3\n  at_cost_limit: fail\nloops:\n  code: "
      "{max_iterations: 3, "
      "max_turns_per_iteration: 40, validation: \"sh check.sh\", iteration_timeout: 1m}\n");
  ASSERT_EQ(loopr("submit --max-cost 5 'Costly code'").exit_code, 0);
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));

  // At the gate: the request's own limit, and the forecast measured against it.
  json plan = show("001");
  ASSERT_TRUE(plan.contains("budget")) << plan.dump();
  EXPECT_EQ(plan["budget"]["max_cost_usd"], 5.0);
  EXPECT_TRUE(plan["budget"]["max_runtime"].is_null());
  ASSERT_TRUE(plan.contains("forecast")) << plan.dump();
  EXPECT_EQ(plan["forecast"]["max_cost_usd"], 5.0);
  EXPECT_EQ(plan["forecast"]["max_cost_source"], "submit --max-cost");
  CliRun gate = loopr("show 001");
  EXPECT_NE(gate.out.find("$5.00 (this request's own)"), std::string::npos) << gate.out;

  ASSERT_EQ(loopr("approve 001").exit_code, 0);
  const std::string code = "code-001-001-001";
  ASSERT_TRUE(wait_status("001", "failed", std::chrono::seconds(120)));

  json c = show(code);
  EXPECT_EQ(c["status"], "failed") << c.dump();
  EXPECT_EQ(c["end_reason"], "cost_limit") << c.dump();
  const std::string why = loopr("show " + code).out;  // the reason is in the text, not --json
  EXPECT_NE(why.find("submit --max-cost"), std::string::npos) << why;
  EXPECT_NE(why.find("during iteration 1"), std::string::npos) << why;
  // One iteration, recorded once, ended by the limit: three $2 turns (the tree had spent a few
  // cents before), so it crossed $5 by less than one turn, not by the iteration's 40 turns.
  ASSERT_EQ(c["iterations"].size(), 1u) << c.dump();
  EXPECT_EQ(c["iterations"][0]["status"], "stopped");
  const double spent = c["iterations"][0].value("cost_usd", 0.0);
  EXPECT_GE(spent, 6.0);
  EXPECT_LT(spent, 6.5);

  // The work of the turns it made is checkpointed on the loop's branch.
  const std::string branch = "loopr/001-loops/" + code;
  std::string log = git("log --format=%s " + branch);
  EXPECT_NE(log.find("loopr(" + code + "): iteration 1: stopped: cost_limit"), std::string::npos)
      << log;
  for (int turn = 1; turn <= 3; ++turn)
    EXPECT_EQ(git("show " + branch + ":code/turn-" + std::to_string(turn) + ".txt"),
              "turn " + std::to_string(turn) + "\n");
  EXPECT_NE(git("show " + branch + ":code/turn-4.txt").find("does not exist"), std::string::npos);
  EXPECT_EQ(run_command("git fsck --strict 2>&1", dir.str()).exit_code, 0);

  json p = show("001");
  EXPECT_EQ(p["end_reason"], "child_failed") << p.dump();
}

TEST_F(BudgetE2E, TheRequestsLimitsHoldForItsWholeTreeAndIterateKeepsThem) {
  make_repo();
  ASSERT_EQ(loopr("submit --max-iterations 1 --max-runtime 90m 'Small budget'").exit_code, 0);
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));
  json plan = show("001");
  EXPECT_EQ(plan["budget"]["max_iterations"], 1) << plan.dump();
  EXPECT_EQ(plan["budget"]["max_runtime"], "90m") << plan.dump();
  EXPECT_TRUE(plan["budget"]["max_cost_usd"].is_null());
  EXPECT_EQ(plan["max_iterations"], 1);

  // Sent back to work at the gate: the plan keeps its limits.
  ASSERT_EQ(loopr("iterate 001 --feedback 'USE-GAMMA'").exit_code, 0);
  ASSERT_TRUE(wait_until(
      [&] {
        json j = show("001");
        return j["status"] == "awaiting_approval" && j.value("iteration", 0) >= 2;
      },
      std::chrono::seconds(60)));
  plan = show("001");
  EXPECT_EQ(plan["budget"]["max_iterations"], 1) << plan.dump();
  EXPECT_EQ(plan["budget"]["max_runtime"], "90m");

  // The plan loop is `complete` as soon as it is approved; its tree ends when its work is
  // merged into main (merge: auto), both code loops' files with it.
  ASSERT_EQ(loopr("approve 001").exit_code, 0);
  ASSERT_TRUE(wait_until(
      [&] {
        return on_branch(dir.str(), "main", "code/code-001-001-001.txt") &&
               on_branch(dir.str(), "main", "code/code-001-002-001.txt");
      },
      std::chrono::seconds(120)))
      << loopr("list --all").out << git("log --stat main");
  // The iterated plan's two specs, each with its phase and code loop: all within one iteration.
  std::map<std::string, int> children;
  for (const auto& [id, l] : loops()) {
    if (id == "001" || l["status"] == "invalidated") continue;
    ++children[l["type"].get<std::string>()];
    EXPECT_EQ(l["max_iterations"], 1) << id;
    EXPECT_EQ(l["status"], "complete") << id;
  }
  EXPECT_EQ(children, (std::map<std::string, int>{{"code", 2}, {"phase", 2}, {"spec", 2}}));
}

TEST_F(BudgetE2E, TheGateWarnsWhenTheForecastPassesTheRequestsOwnLimit) {
  // limits.max_cost_usd stays the default $25, above any forecast of this small tree: only the
  // request's $0.50 is passed by its high estimate.
  make_repo();
  ASSERT_EQ(loopr("submit --max-cost 0.5 'Cheap request'").exit_code, 0);
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));
  json f = show("001")["forecast"];
  ASSERT_TRUE(f.is_object()) << show("001").dump();
  EXPECT_EQ(f["max_cost_usd"], 0.5);
  EXPECT_EQ(f["max_cost_source"], "submit --max-cost");
  ASSERT_GT(f["high"].get<double>(), 0.5) << f.dump();
  EXPECT_LT(f["high"].get<double>(), 25.0) << f.dump();
  EXPECT_EQ(f["over_limit"], true) << f.dump();
  CliRun gate = loopr("show 001");
  EXPECT_NE(gate.out.find("$0.50 (this request's own)"), std::string::npos) << gate.out;
  EXPECT_NE(gate.out.find("is above submit --max-cost $0.50"), std::string::npos) << gate.out;
}

TEST_F(BudgetE2E, LimitsThatAreNotLimitsAreRefusedBeforeAnythingIsMade) {
  make_repo();
  CliRun bad = loopr("submit --max-runtime soon 'x'");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--max-runtime soon is not a duration"), std::string::npos) << bad.err;
  bad = loopr("submit --max-cost -1 'x'");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir / ".loopr/run/loopr.pid"));
}
