// Worktree::work_meets_changes: whether what landed on the integration branch since a loop's
// start touches what the loop changed (the rebase gate moves a loop only then). Cross-checked
// against real rebases: work that "meets nothing" always rebases cleanly.
#include "git/plan_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

class OverlapTest : public PlanFixture {
 protected:
  bool meets(const git::Worktree& wt, const std::string& since) {
    auto r = wt.work_meets_changes(since, integration());
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() && *r;
  }
};

}  // namespace

TEST_F(OverlapTest, WorkApartFromWhatLandedDoesNotMeetIt) {
  const std::string start = sha(integration());
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"a.txt", "a\n"}, {"dir/a.txt", "a\n"}}, "a");
  land("001-001");
  commit(b, {{"b.txt", "b\n"}, {"dir/b.txt", "b\n"}}, "b");
  EXPECT_FALSE(meets(b, start));
  // Nothing landed since the start: nothing to meet.
  EXPECT_FALSE(meets(b, sha(integration())));
  // And such work does rebase cleanly.
  ASSERT_OK_AND_ASSIGN(git::RebaseOutcome r, b.rebase_onto(integration()));
  EXPECT_EQ(r.kind, git::RebaseOutcome::Kind::rebased);
}

TEST_F(OverlapTest, NoOwnChangesMeetNothing) {
  const std::string start = sha(integration());
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"shared.txt", "line 1 by a\nline 2\nline 3\n"}}, "a");
  land("001-001");
  EXPECT_FALSE(meets(b, start));
}

TEST_F(OverlapTest, TheSameFileChangedOnBothSidesMeets) {
  const std::string start = sha(integration());
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  // Different lines: a clean rebase, but the loop should see it (and validate on it).
  commit(a, {{"shared.txt", "line 1 by a\nline 2\nline 3\n"}}, "a");
  land("001-001");
  commit(b, {{"shared.txt", "line 1\nline 2\nline 3 by b\n"}}, "b");
  EXPECT_TRUE(meets(b, start));
}

TEST_F(OverlapTest, AFileTheIntegrationDeletedOrRenamedMeets) {
  const std::string start = sha(integration());
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  run_git(a.path(), "mv shared.txt moved.txt");
  ASSERT_TRUE(a.checkpoint("a moves it").ok());
  land("001-001");
  commit(b, {{"shared.txt", "line 1 by b\nline 2\nline 3\n"}}, "b");
  EXPECT_TRUE(meets(b, start));
}

TEST_F(OverlapTest, ALoopThatDeletesAFileTheIntegrationChangedMeets) {
  const std::string start = sha(integration());
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"shared.txt", "line 1 by a\nline 2\nline 3\n"}}, "a");
  land("001-001");
  remove(b, "shared.txt", "b deletes it");
  EXPECT_TRUE(meets(b, start));
}

TEST_F(OverlapTest, AFolderThatBecameAFileMeets) {
  const std::string start = sha(integration());
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"out", "a file named like b's folder\n"}}, "a");
  land("001-001");
  commit(b, {{"out/report.txt", "b\n"}}, "b");
  EXPECT_TRUE(meets(b, start));
  ASSERT_OK_AND_ASSIGN(git::RebaseOutcome r, b.rebase_onto(integration()));
  EXPECT_EQ(r.kind, git::RebaseOutcome::Kind::conflict);
}

TEST_F(OverlapTest, AnUnknownStartMeetsEverything) {
  git::Worktree a = loop("001-001");
  git::Worktree b = loop("001-002");
  commit(a, {{"a.txt", "a\n"}}, "a");
  land("001-001");
  commit(b, {{"b.txt", "b\n"}}, "b");
  EXPECT_TRUE(meets(b, ""));
  EXPECT_TRUE(meets(b, "not a sha"));
  EXPECT_TRUE(meets(b, std::string(40, '1')));  // no such commit
}
