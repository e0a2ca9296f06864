// Issue 47 item 5 as rules: an iteration that ran out of its time (loops.<type>.iteration_max_runtime)
// is judged and fed back like one that used its turns; limits.max_same_failures fails a loop
// whose validations keep failing the same tests; and the failing tests read from each runner's
// output (engine/test_output.hpp: failing_tests). No store, git, process or model.
#include <gtest/gtest.h>

#include <loopr/engine/test_output.hpp>

#include "engine/iteration_rules.hpp"
#include "engine/rule_loops.hpp"

using namespace loopr;
using namespace loopr::engine;
using End = Conversation::End;

namespace {

Loop code_loop(int max_iterations = 20) {
  return loopr::testing::running_code_loop(max_iterations);
}

IterationFacts failed(std::string output, bool changed = true) {
  Validation v;
  v.exit_code = 1;
  v.output = std::move(output);
  v.summary = "exit 1";
  v.feedback = v.output;
  IterationFacts f;
  f.validation = std::move(v);
  f.changed = changed;
  return f;
}

Config same_failures(int n) {
  Config c;
  c.limits.no_progress_iterations = 100;
  c.limits.max_same_failures = n;
  return c;
}

const char* kPytestTwo =
    "tests/test_a.py::test_x FAILED\n"
    "=== short test summary info ===\n"
    "FAILED tests/test_a.py::test_x - assert 1 == 2\n"
    "FAILED tests/test_b.py::test_y - KeyError: 'k'\n"
    "=== 2 failed, 3 passed in 0.12s ===\n";

}  // namespace

TEST(IterationLimitsTest, AnIterationOutOfTimeIsJudgedAndItsFeedbackNamesTheKey) {
  Loop l = code_loop();
  Config c;
  c.loops[LoopType::code].iteration_max_runtime = std::chrono::minutes(20);
  IterationFacts f = failed("assert x == 2");
  f.end = End::max_runtime;
  f.turns = 7;
  auto v = decide(l, 1, f, c);
  EXPECT_TRUE(v.move.goes_on()) << v.move.reason;  // the loop goes on: the next iteration
  EXPECT_EQ(v.record, IterationOutcome::failed);
  ASSERT_EQ(l.run.feedback.size(), 1u);
  const std::string& text = l.run.feedback[0].text;
  EXPECT_NE(text.find("assert x == 2"), std::string::npos) << text;
  EXPECT_NE(text.find("time limit of 20m (loops.code.iteration_max_runtime)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("after 7 model turns"), std::string::npos) << text;
  EXPECT_TRUE(judged(f));
  EXPECT_TRUE(checkpointed(f));
}

TEST(IterationLimitsTest, AnIterationOutOfTimeThatPassesCompletes) {
  Loop l = code_loop();
  IterationFacts f = failed("");
  f.validation->passed = true;
  f.validation->exit_code = 0;
  f.end = End::max_runtime;
  auto v = decide(l, 1, f, Config{});
  EXPECT_EQ(v.move.status, LoopStatus::complete);
  EXPECT_EQ(v.move.end, EndReason::validation_passed);
}

TEST(IterationLimitsTest, TheSameFailingTestsNTimesFailTheLoopNamingKeyAndTests) {
  Loop l = code_loop();
  const Config c = same_failures(3);
  // The code changes every time and the output's timing differs: the failing tests do not.
  EXPECT_TRUE(decide(l, 1, failed(kPytestTwo), c).move.goes_on());
  EXPECT_EQ(l.run.same_failures, 1);
  std::string later = kPytestTwo;
  later.replace(later.find("0.12s"), 5, "9.80s");
  EXPECT_TRUE(decide(l, 2, failed(later), c).move.goes_on());
  EXPECT_EQ(l.run.same_failures, 2);
  auto v = decide(l, 3, failed(later + "some other noise\n"), c);
  EXPECT_EQ(v.move.status, LoopStatus::failed);
  EXPECT_EQ(v.move.end, EndReason::same_failures);
  EXPECT_NE(v.move.reason.find("limits.max_same_failures: 3"), std::string::npos) << v.move.reason;
  EXPECT_NE(v.move.reason.find("tests/test_a.py::test_x, tests/test_b.py::test_y"),
            std::string::npos)
      << v.move.reason;
  EXPECT_EQ(v.record, IterationOutcome::failed);
}

TEST(IterationLimitsTest, OtherFailingTestsOrAPassingCheckStartTheCountAgain) {
  Loop l = code_loop();
  const Config c = same_failures(2);
  decide(l, 1, failed(kPytestTwo), c);
  // One test fixed: a different set, the count starts again.
  auto v = decide(l, 2, failed("FAILED tests/test_b.py::test_y - KeyError\n"), c);
  EXPECT_TRUE(v.move.goes_on()) << v.move.reason;
  EXPECT_EQ(l.run.same_failures, 1);
  // The tests passed and a reviewer sent it back: not a failing validation.
  IterationFacts reviewed = failed("", true);
  reviewed.validation->passed = true;
  reviewed.review = ReviewResult{};
  reviewed.review->verdict = ReviewResult::Verdict::fail;
  Config with_review = c;
  with_review.review.max_rounds = 10;
  decide(l, 3, reviewed, with_review);
  EXPECT_EQ(l.run.same_failures, 0);
  v = decide(l, 4, failed("FAILED tests/test_b.py::test_y - KeyError\n"), c);
  EXPECT_TRUE(v.move.goes_on()) << v.move.reason;
  v = decide(l, 5, failed("FAILED tests/test_b.py::test_y - KeyError\n"), c);
  EXPECT_EQ(v.move.end, EndReason::same_failures);
}

TEST(IterationLimitsTest, OffByDefaultAndWithoutTestNamesTheOutputDecides) {
  Loop l = code_loop();
  for (int n = 1; n <= 6; ++n)
    EXPECT_TRUE(decide(l, n, failed(kPytestTwo), same_failures(0)).move.goes_on());
  Loop other = code_loop();
  const Config c = same_failures(2);
  decide(other, 1, failed("make: *** [all] Error 1\n"), c);
  auto v = decide(other, 2, failed("make: *** [all] Error 1\n"), c);
  EXPECT_EQ(v.move.end, EndReason::same_failures);
  EXPECT_NE(v.move.reason.find("no test names were recognised"), std::string::npos)
      << v.move.reason;
}

// No progress (nothing changed, the same output) is the narrower rule and wins when both hold.
TEST(IterationLimitsTest, NoProgressComesFirstWhenNothingChanged) {
  Loop l = code_loop();
  Config c = same_failures(2);
  c.limits.no_progress_iterations = 1;
  decide(l, 1, failed(kPytestTwo, false), c);
  auto v = decide(l, 2, failed(kPytestTwo, false), c);
  EXPECT_EQ(v.move.end, EndReason::no_progress);
}

TEST(FailingTestsTest, ReadsEachRunnersNames) {
  EXPECT_EQ(failing_tests(kPytestTwo),
            (std::vector<std::string>{"tests/test_a.py::test_x", "tests/test_b.py::test_y"}));
  EXPECT_EQ(failing_tests("FAIL: test_add (tests.test_calc.CalcTest)\n"
                          "ERROR: test_div (tests.test_calc.CalcTest)\n"),
            (std::vector<std::string>{"tests.test_calc.CalcTest.test_add",
                                      "tests.test_calc.CalcTest.test_div"}));
  EXPECT_EQ(failing_tests("=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n    --- FAIL: "
                          "TestAdd/neg (0.00s)\nFAIL\n"),
            (std::vector<std::string>{"TestAdd", "TestAdd/neg"}));
  EXPECT_EQ(failing_tests("test calc::adds ... ok\ntest calc::divides ... FAILED\n"),
            (std::vector<std::string>{"calc::divides"}));
  EXPECT_EQ(failing_tests("The following tests FAILED:\n\t  2 - parser_test (Failed)\n"
                          "\t  5 - slow_test (Timeout)\n"),
            (std::vector<std::string>{"parser_test", "slow_test"}));
  EXPECT_EQ(failing_tests("  ● Calc › adds two numbers\n\n    expect(received)\n"
                          "  ● Test suite failed to run\n"),
            (std::vector<std::string>{"Calc › adds two numbers"}));
  EXPECT_EQ(failing_tests("CalcTest > adds() FAILED\n"),
            (std::vector<std::string>{"CalcTest > adds()"}));
  EXPECT_EQ(failing_tests("ok 1 - adds\nnot ok 2 - divides # time=1.2ms\n"),
            (std::vector<std::string>{"divides"}));
  EXPECT_EQ(failing_tests("rspec ./spec/calc_spec.rb:12 # Calc adds\n"),
            (std::vector<std::string>{"./spec/calc_spec.rb:12"}));
  EXPECT_EQ(failing_tests("[ERROR] Failures:\n[ERROR]   CalcTest.testAdd:42 expected:<3>\n"),
            (std::vector<std::string>{"CalcTest.testAdd"}));
  EXPECT_TRUE(failing_tests("all good\n3 passed\n").empty());
}

// The output is the model's (its tests print what they like): names are bounded in length and
// number, and a flood of lines costs one pass.
TEST(FailingTestsTest, HostileOutputIsBounded) {
  std::string flood;
  for (int i = 0; i < 5000; ++i) flood += "--- FAIL: Test" + std::to_string(i) + "\n";
  flood += "--- FAIL: " + std::string(10000, 'x') + "\n";
  auto names = failing_tests(flood, 1000);
  EXPECT_EQ(names.size(), 1000u);
  for (const auto& n : names) EXPECT_LE(n.size(), 200u);
}
