// The baseline check's rules (issue 27): an approved plan's children wait for the check of its
// integration branch; a failure under `baseline: block` blocks the plan before any code loop;
// results are kept per commit and settings.
#include <gtest/gtest.h>

#include "manager/tree_fixture.hpp"
#include "manager/tree_rules.hpp"

using namespace loopr;
using namespace loopr::manager;
using namespace loopr::manager::test;

namespace {

// A baseline check of `sha` that failed, saying `summary` with `output`, its whole log at `log`.
BaselineState failed_baseline(const std::string& sha, const std::string& summary,
                              const std::string& output, const std::string& log) {
  BaselineState b;
  b.result = manager::BaselineResult::failed;
  b.sha = sha;
  b.summary = summary;
  b.output = output;
  b.log = log;
  return b;
}

}  // namespace

TEST(BaselineRulesTest, ChildrenWaitForTheCheckAndAFailureBlocksOnlyUnderBlock) {
  BaselineState b;
  EXPECT_EQ(baseline_step(b, BaselineMode::block, false), BaselineStep::check)
      << "no result and none under way (a restart): start one";
  EXPECT_EQ(baseline_step(b, BaselineMode::block, true), BaselineStep::wait);
  b.result = manager::BaselineResult::checking;
  EXPECT_EQ(baseline_step(b, BaselineMode::block, true), BaselineStep::wait);
  EXPECT_EQ(baseline_step(b, BaselineMode::block, false), BaselineStep::check)
      << "a check a kill cut short runs again";
  b.result = manager::BaselineResult::passed;
  EXPECT_EQ(baseline_step(b, BaselineMode::block, false), BaselineStep::proceed);
  b.result = manager::BaselineResult::failed;
  EXPECT_EQ(baseline_step(b, BaselineMode::block, false), BaselineStep::block);
  EXPECT_EQ(baseline_step(b, BaselineMode::warn, false), BaselineStep::proceed);
  b.result = manager::BaselineResult::unavailable;  // the sandbox, the cluster or git never ran it
  EXPECT_EQ(baseline_step(b, BaselineMode::block, false), BaselineStep::proceed);
  b.result = manager::BaselineResult::none;
  EXPECT_EQ(baseline_step(b, BaselineMode::off, false), BaselineStep::proceed);
}

TEST(BaselineRulesTest, ABaselineBlockedPlanEndsItsTreeAsFailedWithTheReasonAndWhatToDo) {
  Loop plan = loop("001", LoopStatus::blocked);
  plan.end_reason = EndReason::baseline_failed;
  BaselineState b = failed_baseline("0123456789abcdef0123", "`npm test` failed with exit code 1",
                                    "Error: Cannot find module 'left-pad'\n",
                                    ".loopr/logs/loops/001/baseline-0123456789ab.log");
  EXPECT_TRUE(baseline_blocked(plan));
  std::vector<Loop> tree = {plan};
  EXPECT_EQ(tree_verdict(tree, "001", MergeMode::automatic), TreeVerdict::failed);
  std::string why = baseline_block_reason(b, plan.id, "main");
  for (const char* part :
       {"0123456789ab", "exit code 1", "Cannot find module 'left-pad'", "loopr resume 001",
        "baseline: warn", "no code loop ran", "baseline-0123456789ab.log", "loopr/001"})
    EXPECT_NE(why.find(part), std::string::npos) << part << " in " << why;
  plan.end_reason = EndReason::rebase_conflict;
  EXPECT_FALSE(baseline_blocked(plan));
}

TEST(BaselineRulesTest, TheStateIsStoredApartFromThePlansRecordAndReadsBackTheSame) {
  BaselineState b = failed_baseline("abc", "`make test` failed with exit code 2", "1 failed\n",
                                    ".loopr/logs/loops/001/baseline-abc.log");
  b.ms = 1200;
  b.setup_ms = 300;
  b.fingerprint = "00ff";
  EXPECT_EQ(baseline_state_from_json(to_json(b)), b);
  EXPECT_EQ(baseline_state_key("001"), "baseline-of/001");
  EXPECT_NE(baseline_state_key("001").rfind("baseline/", 0), 0u)
      << "apart from the per-commit results (baseline_meta_key)";
  EXPECT_EQ(baseline_state_from_json(nlohmann::json("garbage")), BaselineState{});
}

TEST(BaselineRulesTest, ResultsAreKeptPerCommitAndTheSettingsThatChangeThem) {
  Config a;
  a.loops[LoopType::code].validation = "npm test";
  const std::string key = baseline_meta_key("abc", a);
  EXPECT_EQ(key.rfind("baseline/abc/", 0), 0u) << key;
  EXPECT_EQ(key, baseline_meta_key("abc", a)) << "stable";
  EXPECT_NE(key, baseline_meta_key("abd", a));
  Config b = a;
  b.setup.commands = {"npm ci"};
  EXPECT_NE(key, baseline_meta_key("abc", b));
  b = a;
  b.sandbox.read_only = {"node_modules"};
  EXPECT_NE(key, baseline_meta_key("abc", b));
  b = a;
  b.sandbox.env_values["PYTHONPATH"] = "src";
  EXPECT_NE(key, baseline_meta_key("abc", b));
  b = a;
  b.loops[LoopType::code].validation = "npm run test:unit";
  EXPECT_NE(key, baseline_meta_key("abc", b));
  b = a;
  b.limits.max_cost_usd = 99;  // not what the tests see
  EXPECT_EQ(key, baseline_meta_key("abc", b));
}

TEST(BaselineRulesTest, ACodeLoopFailingAsTheBaseDidIsNotRetriedFresh) {
  Loop code = loop("code-001-001-001", LoopStatus::failed);
  code.type = LoopType::code;
  code.run.last_validation_hash = "00ff00ff00ff00ff";
  EXPECT_EQ(after_failure(code), FailureStep::retry_fresh);
  EXPECT_EQ(after_failure(code, "1234123412341234"), FailureStep::retry_fresh)
      << "a different failure than the base's";
  EXPECT_EQ(after_failure(code, "00ff00ff00ff00ff"), FailureStep::roll_up)
      << "the base fails the same way: a fresh attempt would too";
}
