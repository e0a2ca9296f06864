// The one place loopr's commit messages (`loopr(<id>): …`) are built and read.
#include <gtest/gtest.h>

#include <loopr/core/commit_message.hpp>

using loopr::loop_commit_id;
using loopr::loop_commit_message;

TEST(CommitMessageTest, AMessageLooprBuildsNamesItsLoopWhenRead) {
  const std::string m = loop_commit_message("code-001-002-003", "iteration 4: tests pass");
  EXPECT_EQ(m, "loopr(code-001-002-003): iteration 4: tests pass");
  EXPECT_EQ(loop_commit_id(m), "code-001-002-003");
  EXPECT_EQ(loop_commit_id(loop_commit_message("001", "merge plan 001: x\n\nbody")), "001");
}

TEST(CommitMessageTest, AnyOtherMessageNamesNoLoop) {
  for (const char* m : {"fix the parser", "loopr(001) no colon", "loopr(): empty id",
                        "Loopr(001): case", " loopr(001): leading space", "loopr(001", ""})
    EXPECT_FALSE(loop_commit_id(m).has_value()) << m;
}
