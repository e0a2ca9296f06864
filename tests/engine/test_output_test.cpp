// The output normalizer against real captured output of pytest, jest, mocha, go test, cargo
// test and ctest (tests/engine/fixtures/test_output/README.md): two runs of the same failing
// suite compare equal, a different failure does not.
#include <gtest/gtest.h>

#include <loopr/engine/test_output.hpp>

#include "support/temp_dir.hpp"

using namespace loopr::engine;

namespace {

std::string sample(const std::string& name) {
  return loopr::testing::read_file(std::string(LOOPR_SOURCE_DIR) +
                                   "/tests/engine/fixtures/test_output/" + name);
}

// `what` replaced by `with` once (a different failure made from a captured one).
std::string changed(std::string text, const std::string& what, const std::string& with) {
  auto at = text.find(what);
  EXPECT_NE(at, std::string::npos) << what;
  if (at != std::string::npos) text.replace(at, what.size(), with);
  return text;
}

struct Runner {
  const char* name;
  const char* what;  ///< a piece of the failure to change for "a different failure"
  const char* with;
};

const Runner kRunners[] = {
    {"pytest", "E   assert 1 == 3", "E   assert 1 == 5"},
    {"pytest_errors", "No module named 'mypkg'", "No module named 'otherpkg'"},
    {"jest", "Tests:       2 failed, 1 passed", "Tests:       1 failed, 2 passed"},
    {"mocha", "2 failing", "1 failing"},
    {"go", "Sub(2, 1) = 3, want 1", "Sub(2, 1) = 2, want 1"},
    {"cargo", "left: 1", "left: 2"},
    {"ctest", "expected 3, got 1", "expected 3, got 2"},
};

}  // namespace

TEST(TestOutputTest, TwoRunsOfTheSameFailureAreTheSame) {
  for (const Runner& r : kRunners) {
    std::string one = sample(std::string(r.name) + "_run1.txt");
    std::string two = sample(std::string(r.name) + "_run2.txt");
    ASSERT_FALSE(one.empty()) << r.name;
    ASSERT_NE(one, two) << r.name << ": the captured runs differ in their raw output";
    EXPECT_EQ(normalize_test_output(one), normalize_test_output(two)) << r.name;
    EXPECT_EQ(output_fingerprint(one), output_fingerprint(two)) << r.name;
  }
}

TEST(TestOutputTest, ADifferentFailureIsDifferent) {
  for (const Runner& r : kRunners) {
    std::string one = sample(std::string(r.name) + "_run1.txt");
    std::string other = changed(one, r.what, r.with);
    EXPECT_NE(output_fingerprint(one), output_fingerprint(other)) << r.name;
  }
  // A real second capture with one assertion changed.
  EXPECT_NE(output_fingerprint(sample("pytest_run1.txt")),
            output_fingerprint(sample("pytest_other.txt")));
}

TEST(TestOutputTest, WhatIsReplaced) {
  NormalizeOptions wt{{"/srv/repo/wt-7"}};
  EXPECT_EQ(normalize_test_output("5 errors in 0.20s\n"), "5 errors in <T>\n");
  EXPECT_EQ(normalize_test_output("=== 1 failed in 61.20s (0:01:01) ==="),
            "=== 1 failed in <T> ===\n");
  EXPECT_EQ(normalize_test_output("ok  \texample.com/x\t(cached)\n"),
            normalize_test_output("ok  \texample.com/x\t0.004s\n"));
  EXPECT_EQ(normalize_test_output("  ✓ adds (3 ms)\n  ✓ subs\n"), " ✓ adds\n ✓ subs\n");
  EXPECT_EQ(normalize_test_output("Time:        0.304 s, estimated 1 s\n"), "Time: <T>\n");
  EXPECT_EQ(normalize_test_output("took 1m30s and 2h5m and 12ms and 1.5 sec and 3µs\n"),
            "took <T> and <T> and <T> and <T> and <T>\n");
  EXPECT_EQ(normalize_test_output("at 2026-11-23T23:31:30.712Z: started\n"), "at <TS>: started\n");
  EXPECT_EQ(normalize_test_output("[12:04:59] build\n"), "[<T>] build\n");
  EXPECT_EQ(normalize_test_output("object at 0x7f8a8721a310, pid 20369, PID=12\n"),
            "object at 0x<ADDR>, pid <PID>, PID=<PID>\n");
  EXPECT_EQ(normalize_test_output("wrote /tmp/tmp.5QlwCFdMNY/out.txt\n"), "wrote <TMP>\n");
  EXPECT_EQ(normalize_test_output("File \"/tmp/x/t.py\", line 3\n"), "File \"<TMP>\", line 3\n");
  EXPECT_EQ(normalize_test_output("/home/u/tmp/keep.txt:3\n"), "/home/u/tmp/keep.txt:3\n");
  EXPECT_EQ(normalize_test_output("rootdir: /srv/repo/wt-7\n/srv/repo/wt-7/src/a.py:3\n", wt),
            "rootdir: <WT>\n<WT>/src/a.py:3\n");
  EXPECT_EQ(normalize_test_output("/r/.loopr/worktrees/code-001-001-001/a.py:3\n"),
            normalize_test_output("/r/.loopr/worktrees/001-baseline/a.py:3\n"));
  EXPECT_EQ(normalize_test_output("\x1b[31mFAILED\x1b[0m x\n"), "FAILED x\n");
  EXPECT_EQ(normalize_test_output("10%\r50%\r100% done\r\nnext\n"), "100% done\nnext\n");
  EXPECT_EQ(normalize_test_output("a ......  Passed    0.01 sec\n"),
            normalize_test_output("a ....  Passed    10.01 sec\n"));
  EXPECT_EQ(normalize_test_output("\n\n\nx\n\n\n\ny\n\n"), "x\n\ny\n");
  // What is not volatile stays: counts, line numbers, versions, words that end in s.
  EXPECT_EQ(normalize_test_output("3 specs, 2 tests, a.py:12:34, v1.2.3, 5 passed\n"),
            "3 specs, 2 tests, a.py:12:34, v1.2.3, 5 passed\n");
  EXPECT_EQ(normalize_test_output(""), "");
  EXPECT_EQ(output_fingerprint("x").size(), 16u);
  EXPECT_EQ(output_fingerprint("x"), output_fingerprint("x\n\n"));
}
