// Many loops at once: 8 threads each add their own worktree of one repository and commit 20
// times in it, all at the same time. Nothing may be lost and git must find the repository sound.
#include <set>
#include <thread>

#include "git/plan_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {
class ThreadsTest : public PlanFixture {};
}  // namespace

TEST_F(ThreadsTest, EightThreadsCommittingTwentyTimesEachLoseNothing) {
  constexpr int kThreads = 8;
  constexpr int kCommits = 20;
  // One Repository object shared by every thread: it holds only paths, and each call opens
  // its own libgit2 handle on the calling thread.
  const git::Repository& shared = repo_;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string id = "001-00" + std::to_string(t + 1);
      auto fail = [&](const std::string& what, const Error& e) {
        failures[t] = what + ": " + e.message;
      };
      auto branch = shared.create_branch(branch_of(id), integration());
      if (!branch.ok()) return fail("create_branch", branch.error());
      auto wt = shared.add_worktree(id, branch_of(id));
      if (!wt.ok()) return fail("add_worktree", wt.error());
      for (int i = 1; i <= kCommits; ++i) {
        // Every iteration touches a file of its own and a file all threads' loops share.
        write_file(wt->path() / ("thread-" + std::to_string(t)) / ("file-" + std::to_string(i)),
                   std::to_string(i) + "\n");
        write_file(wt->path() / "progress.txt", id + " at " + std::to_string(i) + "\n");
        auto c = wt->checkpoint("loop " + id + " iteration " + std::to_string(i));
        if (!c.ok()) return fail("checkpoint " + std::to_string(i), c.error());
        if (c->kind != git::CommitOutcome::Kind::committed) {
          failures[t] = "checkpoint " + std::to_string(i) + " made no commit";
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;

  std::set<std::string> all;
  for (int t = 0; t < kThreads; ++t) {
    std::string branch = branch_of("001-00" + std::to_string(t + 1));
    auto own = lines_of(run_git(t_.root(), "rev-list " + integration() + ".." + branch));
    EXPECT_EQ(own.size(), static_cast<std::size_t>(kCommits)) << branch;
    all.insert(own.begin(), own.end());
    auto subjects = lines_of(run_git(t_.root(), "log --format=%s -n 1 " + branch));
    EXPECT_EQ(subjects, std::vector<std::string>{"loop 001-00" + std::to_string(t + 1) +
                                                 " iteration " + std::to_string(kCommits)});
    EXPECT_EQ(lines_of(run_git(t_.root(), "ls-tree --name-only " + branch + " thread-" +
                                              std::to_string(t) + "/"))
                  .size(),
              static_cast<std::size_t>(kCommits));
  }
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kThreads * kCommits));
  EXPECT_EQ(lines_of(run_git(t_.root(), "worktree list")).size(),
            static_cast<std::size_t>(kThreads + 1));
  EXPECT_TRUE(fsck_clean(t_.root()));
}
