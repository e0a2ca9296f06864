// Issue 29 through whole runs of the real engine in process (tests/support/fakes): a code loop
// that changes the test harness or an existing test its phase does not list fails without the
// tests running; one whose phase lists the file passes; the optional reviewer (loops.review)
// passes a loop, sends it back with feedback, or hands it to the person when it cannot be asked.
#include <gtest/gtest.h>

#include <set>

#include <loopr/core/iteration_files.hpp>
#include <loopr/store/store_writes.hpp>

#include "support/fakes/engine_kit.hpp"
#include "support/loop_end.hpp"
#include "support/subprocess.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

const char* kCodeId = "code-001-001-001";
const char* kPhasePath = ".loopr/phases/001-001-001-greet.phase.md";

std::string phase_doc(const std::string& files) {
  return "# Greet\n\n## Parent Spec\n`.loopr/specs/001-001-greet.spec.md`\n\n## Task\nGreet.\n\n"
         "## Specific Work\n- Make greet.sh greet.\n" +
         (files.empty() ? std::string() : "- Files: " + files + "\n") +
         "\n## Success Criteria\n- `sh check.sh` passes.\n";
}

// check.sh runs the tests in tests/; tests/t_greet.sh fails until greet.sh says hello.
std::map<std::string, std::string> project(const std::string& phase_files) {
  return {{"check.sh", "for t in tests/*.sh; do sh \"$t\" || exit 1; done\necho all passed\n"},
          {"greet.sh", "echo nothing\n"},
          {"tests/t_greet.sh",
           "sh greet.sh | grep -q hello || { echo 't_greet: no hello'; exit 1; }\n"},
          {kPhasePath, phase_doc(phase_files)}};
}

// A code loop whose first turn of every iteration makes `calls` and whose second turn is done.
std::string code_script(const std::string& calls, const std::string& extra_rules = "") {
  return R"(
defaults:
  usage: {input_tokens: 1000, output_tokens: 100}
  thinking: false
rules:
)" + extra_rules +
         R"(
  - name: done
    match: {loop_type: code, turn: 2}
    reply: {text: "Done."}
  - name: work
    match: {loop_type: code}
    reply:
      tool_use:
)" + calls;
}

std::string write_call(const std::string& path, const std::string& content) {
  return "        - name: write_file\n          input: {path: \"" + path + "\", content: \"" +
         content + "\"}\n";
}

const std::string kFixGreet = write_call("greet.sh", "echo hello\\n");

// The code loop of the kit, reading its phase, based on main, checked by the real check.sh.
void setup(EngineKit& h, int max_iterations = 3) {
  h.config->loops[LoopType::code].validation = "sh check.sh";
  h.config->limits.no_progress_iterations = 10;
  h.executor.run_for_real("check.sh");
  Loop l = h.add_loop(kCodeId, LoopType::code, "Greet", max_iterations);
  l.input_artifact = kPhasePath;
  l.tree.based_on = "main";
  update_loop(*h.store, l).value();
}

}  // namespace

TEST(ProtectionTest, RewritingTheRunnerFailsTheIterationWithoutRunningTheTests) {
  EngineKit h(code_script(write_call("check.sh", "exit 0\\n")), project(""));
  setup(h, 2);
  Loop l = h.run(kCodeId);
  expect_ended(l, LoopStatus::failed, EndReason::max_iterations);
  EXPECT_EQ(h.executor.count("check.sh"), 0) << "a changed harness must not decide";
  auto recs = h.iterations(kCodeId);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].status, IterationOutcome::failed);
  EXPECT_NE(recs[0].summary.find("changed the test harness: check.sh"), std::string::npos)
      << recs[0].summary;
  ASSERT_FALSE(recs[0].details.protected_files.empty()) << loopr::to_json(recs[0].details).dump();
  EXPECT_EQ(recs[0].details.protected_files[0].path, "check.sh");
  EXPECT_EQ(recs[0].details.protected_files[0].role, "harness");
  // The next prompt names the file, what to do and why.
  auto sent = h.requests_of(kCodeId);
  ASSERT_FALSE(sent.empty());
  std::string last_prompt = sent.back()["body"]["messages"][0]["content"].dump();
  EXPECT_NE(last_prompt.find("check.sh"), std::string::npos);
  EXPECT_NE(last_prompt.find("restore it"), std::string::npos) << last_prompt.substr(0, 2000);
  EXPECT_NE(last_prompt.find("decides whether tests pass"), std::string::npos);
  // The iteration's work is still committed (the audit trail), the base is untouched.
  EXPECT_EQ(run_command("git show main:check.sh", h.dir.path().string()).output,
            project("").at("check.sh"));
}

TEST(ProtectionTest, NeuteringAnExistingTestFailsButAddingANewOneIsFree) {
  EngineKit h(code_script(kFixGreet + write_call("tests/t_greet.sh", "exit 0\\n") +
                          write_call("tests/t_new.sh", "exit 0\\n")),
              project(""));
  setup(h, 1);
  Loop l = h.run(kCodeId);
  EXPECT_EQ(l.status, LoopStatus::failed);
  auto recs = h.iterations(kCodeId);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_NE(recs[0].summary.find("changed existing tests: tests/t_greet.sh"), std::string::npos)
      << recs[0].summary;
  EXPECT_EQ(recs[0].summary.find("t_new"), std::string::npos) << recs[0].summary;
  EXPECT_EQ(h.executor.count("check.sh"), 0);
}

TEST(ProtectionTest, APhaseThatListsATestMayUpdateIt) {
  // Honest work: the phase says the test changes (it now wants "hello, world").
  EngineKit h(code_script(write_call("greet.sh", "echo hello, world\\n") +
                          write_call("tests/t_greet.sh",
                                     "sh greet.sh | grep -q 'hello, world' || exit 1\\n")),
              project("`tests/t_greet.sh`, `greet.sh`"));
  setup(h);
  Loop l = h.run(kCodeId);
  EXPECT_EQ(l.status, LoopStatus::complete) << l.status_reason;
  EXPECT_EQ(l.iteration, 1);
  EXPECT_EQ(h.executor.count("check.sh"), 1);
  EXPECT_TRUE(h.iterations(kCodeId)[0].details.protected_files.empty());
}

TEST(ProtectionTest, APhaseThatListsTheRunnerMayChangeIt) {
  EngineKit h(code_script(kFixGreet + write_call("check.sh", "sh tests/t_greet.sh && echo ok\\n")),
              project("check.sh"));
  setup(h);
  Loop l = h.run(kCodeId);
  EXPECT_EQ(l.status, LoopStatus::complete) << l.status_reason;
  EXPECT_EQ(h.executor.count("check.sh"), 1);
}

TEST(ProtectionTest, EditingItsOwnPhaseGivesTheLoopNothing) {
  // The model adds `- Files: check.sh` to its phase document in its worktree: the phase as the
  // loop found it decides, so the rewritten runner is still a breach.
  EngineKit h(code_script(write_call("check.sh", "exit 0\\n")), project(""));
  setup(h, 1);
  std::string worktree = h.loop(kCodeId).worktree;
  write_file(std::filesystem::path(worktree) / kPhasePath, phase_doc("check.sh"));
  Loop l = h.run(kCodeId);
  EXPECT_EQ(l.status, LoopStatus::failed);
  EXPECT_EQ(h.executor.count("check.sh"), 0);
  EXPECT_NE(h.iterations(kCodeId)[0].summary.find("check.sh"), std::string::npos);
}

// ---------------------------------------------------------------- the review loop

namespace {

std::string review_rule(const std::string& replies) {
  return "  - name: reviewer\n    match: {loop_type: review}\n    replies:\n" + replies;
}

void enable_review(EngineKit& h, int max_rounds = 2, int max_attempts = 2) {
  h.config->review.enabled = true;
  h.config->review.max_rounds = max_rounds;
  h.config->review.max_attempts = max_attempts;
  h.prompts.templates["review"] =
      "# Review "
      "{{loop-id}}\nPhase:\n{{input}}\nDiff:\n{{git-diff}}\nTests:\n{{validation-output}}\n";
}

int count_events(const EngineKit& h, const std::string& type) {
  int n = 0;
  for (const Event& e : h.published) n += e.type == type;
  return n;
}

}  // namespace

TEST(ReviewTest, APassingReviewCompletesTheLoopAndItsCostCounts) {
  EngineKit h(code_script(kFixGreet, review_rule("      - {text: \"PASS looks right\"}\n")),
              project("greet.sh"));
  enable_review(h);
  setup(h);
  Loop l = h.run(kCodeId);
  EXPECT_EQ(l.status, LoopStatus::complete) << l.status_reason;
  auto recs = h.iterations(kCodeId);
  ASSERT_EQ(recs.size(), 1u);
  ASSERT_TRUE(recs[0].details.review.has_value()) << loopr::to_json(recs[0].details).dump();
  EXPECT_EQ(recs[0].details.review->verdict, "pass");
  EXPECT_GT(recs[0].details.review->cost_usd, 0);
  EXPECT_EQ(count_events(h, "review_finished"), 1);
  // The reviewer saw the phase, the diff and the test output; its tokens are the loop's.
  std::vector<nlohmann::json> reviews;
  for (const auto& r : h.requests_of(kCodeId))
    if (r["headers"].value("x-loopr-loop-type", "") == "review") reviews.push_back(r);
  ASSERT_EQ(reviews.size(), 1u);
  std::string prompt = reviews[0]["body"]["messages"][0]["content"].dump();
  EXPECT_NE(prompt.find("Make greet.sh greet"), std::string::npos) << prompt.substr(0, 1500);
  EXPECT_NE(prompt.find("+echo hello"), std::string::npos) << prompt.substr(0, 1500);
  EXPECT_NE(prompt.find("all passed"), std::string::npos) << prompt.substr(0, 1500);
  EXPECT_EQ(l.usage.input_tokens, 3000);  // two code turns and the review
  EXPECT_TRUE(
      std::filesystem::exists(h.dir / ".loopr/logs/loops" / kCodeId / "iterations/001/review.md"));
  // A reviewed iteration writes every file of the table the readers show (core/iteration_files),
  // and nothing else: a file the engine writes is never one the CLI or the web page misses.
  std::set<std::string> written, named;
  for (const auto& e :
       std::filesystem::directory_iterator(RepoPaths(h.dir.path()).iteration_dir(kCodeId, 1)))
    written.insert(e.path().filename().string());
  for (const auto& spec : kIterationFiles) named.insert(spec.name);
  EXPECT_EQ(written, named);
}

TEST(ReviewTest, AFailedReviewSendsTheLoopBackWithItsFeedback) {
  EngineKit h(code_script(kFixGreet, review_rule("      - {text: \"FAIL: no test for the name\\n- "
                                                 "add tests/t_name.sh\"}\n"
                                                 "      - {text: \"PASS\"}\n")),
              project("greet.sh"));
  enable_review(h);
  setup(h);
  Loop l = h.run(kCodeId);
  EXPECT_EQ(l.status, LoopStatus::complete) << l.status_reason;
  EXPECT_EQ(l.iteration, 2);
  auto recs = h.iterations(kCodeId);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].status, IterationOutcome::failed);
  EXPECT_EQ(recs[0].details.review->verdict, "fail");
  EXPECT_NE(recs[0].summary.find("no test for the name"), std::string::npos) << recs[0].summary;
  EXPECT_EQ(recs[1].details.review->verdict, "pass");
  EXPECT_EQ(count_events(h, "review_finished"), 2);
  // Iteration 2's prompt carries the reviewer's words.
  std::string second;
  for (const auto& r : h.requests_of(kCodeId))
    if (r["headers"].value("x-loopr-loop-type", "") == "code")
      second = r["body"]["messages"][0]["content"].dump();
  EXPECT_NE(second.find("add tests/t_name.sh"), std::string::npos) << second.substr(0, 2000);
}

TEST(ReviewTest, ReviewRoundsAreBoundedThenThePersonDecides) {
  EngineKit h(code_script(kFixGreet, review_rule("      - {text: \"FAIL: not good\"}\n")),
              project("greet.sh"));
  enable_review(h, 2);
  setup(h, 10);
  Loop l = h.run(kCodeId);
  expect_ended(l, LoopStatus::paused, EndReason::review_rejected);
  EXPECT_EQ(l.iteration, 2);
  EXPECT_EQ(l.run.attended_passed, 2);
  EXPECT_NE(l.status_reason.find("not good"), std::string::npos) << l.status_reason;
}

TEST(ReviewTest, AReviewerThatCannotBeAskedHandsTheLoopToThePerson) {
  EngineKit h(code_script(kFixGreet, review_rule("      - {fault: {status: 500}}\n")),
              project("greet.sh"));
  h.config->llm.max_retries = 0;
  enable_review(h, 2, 2);
  setup(h);
  Loop l = h.run(kCodeId);
  expect_ended(l, LoopStatus::paused, EndReason::review_error);
  EXPECT_EQ(l.iteration, 1);
  auto recs = h.iterations(kCodeId);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].details.review->verdict, "error");
  EXPECT_EQ(recs[0].details.review->attempts, 2);
  int review_calls = 0;
  for (const auto& r : h.requests_of(kCodeId))
    review_calls += r["headers"].value("x-loopr-loop-type", "") == "review";
  EXPECT_EQ(review_calls, 2);
  // Its tests pass: the person's `resume` completes it as it is, without another model call.
  l = h.run(kCodeId);
  EXPECT_EQ(l.status, LoopStatus::complete) << l.status_reason;
  EXPECT_EQ(l.iteration, 1);
}

TEST(ReviewTest, OffByDefault) {
  EngineKit h(code_script(kFixGreet, review_rule("      - {text: \"FAIL: never asked\"}\n")),
              project("greet.sh"));
  setup(h);
  Loop l = h.run(kCodeId);
  EXPECT_EQ(l.status, LoopStatus::complete) << l.status_reason;
  EXPECT_FALSE(h.iterations(kCodeId)[0].details.review.has_value());
  EXPECT_EQ(count_events(h, "review_finished"), 0);
}
