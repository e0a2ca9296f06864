// The loop record's marks: typed in memory, stored under "context" with the keys earlier loopr
// versions wrote, so a store written before the marks were typed loads without a migration.
#include <gtest/gtest.h>

#include <loopr/core/iteration_outcome.hpp>
#include <loopr/core/loop.hpp>

using namespace loopr;
using nlohmann::json;

namespace {

// A plan record exactly as loopr at c9bc69a stored it (every mark set, none at its default).
const char* const kStoredPlan = R"json({
  "id": "001", "type": "plan", "parent_id": "", "plan_id": "001", "index": 0,
  "task": "Add a --shout flag", "input_artifact": "",
  "output_artifacts": [".loopr/plans/001-add-a-shout-flag.plan.md"], "prompt_template": "plan",
  "validation_command": "", "max_iterations": 5, "worktree": "", "branch": "loopr/001-loops/001",
  "iteration": 2, "status": "complete", "status_reason": "approved by the user", "progress": "p",
  "context": {
    "attempt": 2,
    "base_branch": "main",
    "based_on": "1111111111111111111111111111111111111111",
    "children_base": 3,
    "conflicts": ["a.txt", "b/c.txt"],
    "consecutive_errors": 1,
    "feedback": [{"iteration": 0, "source": "user", "summary": "split it", "text": "Split spec 2."},
                 {"iteration": 2, "source": "format check", "summary": "1 problem", "text": "x.md:3: …"}],
    "head": "2222222222222222222222222222222222222222",
    "integration_generation": 3,
    "invalidated_worktree": "/repo/.loopr/worktrees/001",
    "last_error": "overloaded (529)",
    "last_validation_hash": "1234567",
    "merge_error": "it conflicts with main in a.txt",
    "merged_into_base": "3333333333333333333333333333333333333333",
    "merged_iteration": 2,
    "merged_sha": "4444444444444444444444444444444444444444",
    "no_progress": 2,
    "rolled_up": true,
    "spawned_iteration": 2,
    "tree_complete": true,
    "user_rejected": true
  },
  "input_tokens": 1000, "output_tokens": 200, "cache_read_tokens": 0, "cache_write_tokens": 0,
  "cost_usd": 0.5, "created_at": 1763700000123, "updated_at": 1763700005456, "version": 9})json";

// A `merge: pr` plan's marks exactly as loopr at 268c5fc stored them (the PR's state a string
// then, an enum since; the same texts).
const char* const kStoredPrPlan = R"json({
  "id": "002", "type": "plan", "parent_id": "", "plan_id": "002", "index": 0,
  "task": "Add a --quiet flag", "input_artifact": "",
  "output_artifacts": [".loopr/plans/002-add-a-quiet-flag.plan.md"], "prompt_template": "plan",
  "validation_command": "", "max_iterations": 5, "worktree": "", "branch": "loopr/002-loops/002",
  "iteration": 1, "status": "complete", "status_reason": "approved by the user", "progress": "",
  "context": {
    "base_branch": "main",
    "ci_fixes": 1,
    "pr_checks": "passed",
    "pr_failing": "lint",
    "pr_head": "5555555555555555555555555555555555555555",
    "pr_number": 7,
    "pr_pushed_at": 1763700001000,
    "pr_state": "merged",
    "pr_url": "https://github.com/acme/widgets/pull/7",
    "tree_complete": true
  },
  "input_tokens": 10, "output_tokens": 2, "cache_read_tokens": 0, "cache_write_tokens": 0,
  "cost_usd": 0.01, "created_at": 1763700000123, "updated_at": 1763700005456, "version": 4})json";

}  // namespace

TEST(LoopMarksTest, AMergePrPlanFromBeforeThePrStateWasTypedLoadsAndWritesBackTheSame) {
  const json stored = json::parse(kStoredPrPlan);
  auto loop = loop_from_store_json(stored);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  EXPECT_EQ(loop->tree.pr_state, PullRequestState::merged);
  EXPECT_EQ(loop->tree.pr_checks, PrChecks::passed);
  EXPECT_EQ(loop->tree.pr_number, 7);
  EXPECT_TRUE(loop->unknown_marks.empty()) << loop->unknown_marks.dump();
  EXPECT_EQ(to_store_json(*loop).dump(), stored.dump());
}

TEST(LoopMarksTest, APullRequestsStateIsOneOfThreeTextsAndNoneForAnyOther) {
  for (const char* text : {"open", "closed", "merged"}) {
    Loop l;
    l.id = "001";
    l.tree.pr_state = parse_pull_request_state(text);
    ASSERT_NE(l.tree.pr_state, PullRequestState::none) << text;
    EXPECT_STREQ(to_string(l.tree.pr_state), text);
    EXPECT_EQ(to_store_json(l)["context"]["pr_state"], text);
    EXPECT_EQ(loop_from_store_json(to_store_json(l))->tree.pr_state, l.tree.pr_state) << text;
  }
  Loop none;
  none.id = "001";
  EXPECT_FALSE(to_store_json(none)["context"].contains("pr_state"));
  // A word this version does not know (a forge's own, a newer loopr's) is no state it acts on.
  for (const char* text : {"", "opened", "OPEN", "locked", "draft"})
    EXPECT_EQ(parse_pull_request_state(text), PullRequestState::none) << text;
  EXPECT_TRUE(ended(PullRequestState::merged));
  EXPECT_TRUE(ended(PullRequestState::closed));
  EXPECT_FALSE(ended(PullRequestState::open));
  EXPECT_FALSE(ended(PullRequestState::none));
}

TEST(LoopMarksTest, ARecordInTheEarlierFormatLoadsIntoTypedMarks) {
  auto loop = loop_from_store_json(json::parse(kStoredPlan));
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  const TreeMarks& t = loop->tree;
  EXPECT_EQ(t.attempt, 2);
  EXPECT_EQ(t.base_branch, "main");
  EXPECT_EQ(t.based_on, std::string(40, '1'));
  EXPECT_EQ(t.children_base, 3);
  EXPECT_EQ(t.conflicts, (std::vector<std::string>{"a.txt", "b/c.txt"}));
  EXPECT_EQ(t.integration_generation, 3);
  EXPECT_EQ(t.invalidated_worktree, "/repo/.loopr/worktrees/001");
  EXPECT_EQ(t.merge_error, "it conflicts with main in a.txt");
  EXPECT_EQ(t.merged_into_base, std::string(40, '3'));
  EXPECT_EQ(t.merged_iteration, 2);
  EXPECT_EQ(t.merged_sha, std::string(40, '4'));
  EXPECT_TRUE(t.rolled_up);
  EXPECT_EQ(t.spawned_iteration, 2);
  EXPECT_TRUE(t.tree_complete);
  EXPECT_TRUE(t.user_rejected);
  const RunMarks& r = loop->run;
  EXPECT_EQ(r.consecutive_errors, 1);
  EXPECT_EQ(r.head, std::string(40, '2'));
  EXPECT_EQ(r.last_error, "overloaded (529)");
  EXPECT_EQ(r.last_validation_hash, "1234567");
  EXPECT_EQ(r.no_progress, 2);
  ASSERT_EQ(r.feedback.size(), 2u);
  EXPECT_EQ(r.feedback[0], (FeedbackEntry{0, FeedbackSource::user, "split it", "Split spec 2."}));
  EXPECT_EQ(r.feedback[1].source, FeedbackSource::format_check);
  EXPECT_TRUE(loop->unknown_marks.empty()) << loop->unknown_marks.dump();
}

// Each feedback source is stored as its word and read back as itself; the words are the ones
// earlier loopr wrote (the prompt shows them), and any other word reads as the engine's.
TEST(LoopMarksTest, FeedbackSourcesAreTheirStoredWords) {
  const std::pair<FeedbackSource, const char*> words[] = {
      {FeedbackSource::validation, "validation"},
      {FeedbackSource::format_check, "format check"},
      {FeedbackSource::protected_files, "protected files"},
      {FeedbackSource::review, "review"},
      {FeedbackSource::user, "user"},
      {FeedbackSource::engine, "engine"},
      {FeedbackSource::integration, "integration"},
      {FeedbackSource::rebase, "rebase"},
      {FeedbackSource::ci, "ci"}};
  for (const auto& [source, word] : words) {
    EXPECT_STREQ(to_string(source), word);
    Loop l;
    l.id = "code-001";
    l.run.feedback.push_back({1, source, "s", "t"});
    json stored = to_store_json(l);
    EXPECT_EQ(stored["context"]["feedback"][0]["source"], word) << stored.dump();
    auto back = loop_from_store_json(stored);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->run.feedback.at(0).source, source) << word;
  }
  EXPECT_EQ(parse_feedback_source("judge"), FeedbackSource::engine);
  EXPECT_EQ(parse_feedback_source(""), FeedbackSource::engine);
}

TEST(LoopMarksTest, WritingItBackGivesTheSameRecordByteForByte) {
  json stored = json::parse(kStoredPlan);
  auto loop = loop_from_store_json(stored);
  ASSERT_TRUE(loop.ok());
  EXPECT_EQ(to_store_json(*loop).dump(), stored.dump());
}

TEST(LoopMarksTest, MarksAtTheirDefaultAreLeftOutAsEarlierVersionsLeftThem) {
  Loop l;
  l.id = "code-001-001-001";
  l.type = LoopType::code;
  json context = to_store_json(l)["context"];
  EXPECT_TRUE(context.empty()) << context.dump();
  // An explicit default an earlier version wrote (`"consecutive_errors": 0`) reads the same.
  json stored = to_store_json(l);
  stored["context"] = {{"consecutive_errors", 0}, {"attempt", 1}, {"tree_complete", false}};
  auto back = loop_from_store_json(stored);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->run, RunMarks{});
  EXPECT_EQ(back->tree, TreeMarks{});
  EXPECT_TRUE(back->unknown_marks.empty());
}

TEST(LoopMarksTest, AMarkOfTheWrongTypeReadsAsItsDefaultLikeBefore) {
  Loop l;
  l.id = "001";
  json stored = to_store_json(l);
  stored["context"] = {
      {"merged_iteration", "2"}, {"rolled_up", 1}, {"conflicts", "a.txt"}, {"feedback", {1, 2}}};
  auto back = loop_from_store_json(stored);
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->tree.merged_iteration.has_value());
  EXPECT_FALSE(back->tree.rolled_up);
  EXPECT_TRUE(back->tree.conflicts.empty());
  EXPECT_TRUE(back->run.feedback.empty());
}

TEST(LoopMarksTest, KeysOfANewerLooprSurviveARoundTrip) {
  Loop l;
  l.id = "001";
  json stored = to_store_json(l);
  stored["context"] = {{"coordination_notes", {{"n", 1}}}, {"merged_iteration", 4}};
  auto back = loop_from_store_json(stored);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->tree.merged_iteration, 4);
  EXPECT_EQ(back->unknown_marks, (json{{"coordination_notes", {{"n", 1}}}}));
  EXPECT_EQ(to_store_json(*back)["context"], stored["context"]);
}

TEST(LoopMarksTest, TheApiShapeIsExactlyTheInterfaceFields) {
  json j = to_api_json(Loop{});
  ASSERT_EQ(j.size(), std::size(kApiLoopFields));
  for (const char* f : kApiLoopFields) EXPECT_TRUE(j.contains(f)) << f;
}

TEST(LoopMarksTest, TheRuntimeStartAndAnAttendedPassSurviveTheStore) {
  Loop l;
  l.id = "001";
  l.tree.runtime_from = 1763700000123;
  l.run.attended_passed = 3;
  json context = to_store_json(l)["context"];
  EXPECT_EQ(context["runtime_from"], 1763700000123);
  EXPECT_EQ(context["attended_passed"], 3);
  auto back = loop_from_store_json(to_store_json(l));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->tree.runtime_from, 1763700000123);
  EXPECT_EQ(back->run.attended_passed, 3);
  EXPECT_TRUE(back->unknown_marks.empty());
}

TEST(LoopMarksTest, ARequestsBudgetSurvivesTheStoreAndIsLeftOutWhenUnset) {
  Loop l;
  l.id = "001";
  EXPECT_FALSE(to_store_json(l)["context"].contains("budget_cost_usd"));
  l.tree.budget.max_cost_usd = 2.5;
  l.tree.budget.max_runtime = std::chrono::minutes(90);
  l.tree.budget.max_iterations = 3;
  json context = to_store_json(l)["context"];
  EXPECT_EQ(context["budget_cost_usd"], 2.5);
  EXPECT_EQ(context["budget_runtime_ms"], 5'400'000);
  EXPECT_EQ(context["budget_iterations"], 3);
  auto back = loop_from_store_json(to_store_json(l));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->tree.budget, l.tree.budget);
  EXPECT_TRUE(back->unknown_marks.empty());
}

// Issue 44 R1: the gate's and the pull request's states are enums in memory and the same texts in
// the store as every earlier loopr wrote them ("" for none: the key is left out).
TEST(LoopMarksTest, TheGateAndPrStatesAreTypedAndStoredAsTheirTexts) {
  for (const char* text : {"checking", "passed", "failed", "forced"}) {
    Loop l;
    l.id = "001";
    l.tree.gate_result = parse_gate_result(text);
    ASSERT_NE(l.tree.gate_result, GateResult::none) << text;
    json context = to_store_json(l)["context"];
    EXPECT_EQ(context["gate_result"], text);
    auto back = loop_from_store_json(to_store_json(l));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->tree.gate_result, l.tree.gate_result) << text;
  }
  for (const char* text : {"pending", "passed", "failed", "skipped"}) {
    Loop l;
    l.id = "001";
    l.tree.pr_checks = parse_pr_checks(text);
    ASSERT_NE(l.tree.pr_checks, PrChecks::none) << text;
    EXPECT_EQ(to_store_json(l)["context"]["pr_checks"], text);
    EXPECT_EQ(loop_from_store_json(to_store_json(l))->tree.pr_checks, l.tree.pr_checks) << text;
  }
  Loop none;
  none.id = "001";
  EXPECT_FALSE(to_store_json(none)["context"].contains("gate_result"));
  EXPECT_FALSE(to_store_json(none)["context"].contains("pr_checks"));
  // A text this version does not know reads as none, never as a state it would act on.
  EXPECT_EQ(parse_gate_result("merged-by-a-newer-loopr"), GateResult::none);
  EXPECT_EQ(parse_pr_checks("PASSED"), PrChecks::none);
}

TEST(LoopMarksTest, AnIterationsOutcomeIsOneOfFiveTextsAndOtherForTheRest) {
  for (const char* text : {"passed", "failed", "asked", "stopped", "error"}) {
    const IterationOutcome o = parse_iteration_outcome(text);
    EXPECT_NE(o, IterationOutcome::other) << text;
    EXPECT_STREQ(to_string(o), text);
  }
  EXPECT_EQ(parse_iteration_outcome(""), IterationOutcome::other);
  EXPECT_EQ(parse_iteration_outcome("skipped"), IterationOutcome::other);
}
