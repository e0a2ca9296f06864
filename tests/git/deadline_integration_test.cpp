// Git work on a worktree under a deadline (issue 28 item 3): something the sweep did not take
// away (here a symlinked .gitignore leading to a FIFO outside, asked about without a sweep)
// blocks libgit2 in open(); past the deadline the call is interrupted and the work ends
// instead of holding the thread for good. Each wait has its own way out, so a broken deadline
// fails the test rather than hanging it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

#include <loopr/git/work_tree_state.hpp>

#include "git/deadline.hpp"
#include "git/git_test_repo.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::Worktree;
using loopr::git::detail::set_worktree_deadline;
using loopr::git::detail::WorkDeadline;
using loopr::git::detail::worktree_deadline;

namespace {

// Runs `work` on its own thread; if it has not returned after a minute, opens `fifo` for
// writing (which ends any open() waiting on it) and reports the hang.
template <typename F>
::testing::AssertionResult returns_by_itself(const std::filesystem::path& fifo, F work) {
  auto done = std::async(std::launch::async, work);
  if (done.wait_for(std::chrono::minutes(1)) == std::future_status::ready) {
    done.get();
    return ::testing::AssertionSuccess();
  }
  int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  done.wait();
  if (w >= 0) ::close(w);
  return ::testing::AssertionFailure() << "still blocked after a minute";
}

struct ShortDeadline {
  std::chrono::milliseconds before = worktree_deadline();
  ShortDeadline() { set_worktree_deadline(std::chrono::milliseconds(300)); }
  ~ShortDeadline() { set_worktree_deadline(before); }
};

}  // namespace

TEST(WorkDeadline, AnOpenThatWaitsForAWriterIsInterrupted) {
  TempDir dir("loopr-deadline");
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  int rc = 0, err = 0;
  bool expired = false;
  EXPECT_TRUE(returns_by_itself(fifo, [&] {
    WorkDeadline deadline(std::chrono::milliseconds(200));
    rc = ::open(fifo.c_str(), O_RDONLY | O_CLOEXEC);
    err = errno;
    expired = deadline.expired();
  }));
  EXPECT_EQ(rc, -1);
  EXPECT_EQ(err, EINTR);
  EXPECT_TRUE(expired);
}

TEST(WorkDeadline, WorkThatEndsInTimeIsNotTouched) {
  TempDir dir("loopr-deadline");
  write_file(dir.path() / "f", "text\n");
  WorkDeadline deadline(std::chrono::minutes(1));
  EXPECT_EQ(read_file(dir.path() / "f"), "text\n");
  EXPECT_FALSE(deadline.expired());
}

TEST(WorkDeadline, GitWorkBlockedByASymlinkedGitignoreEndsInsteadOfHanging) {
  TestRepo t;
  const auto fifo = t.dir().path() / "host-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::filesystem::create_directories(t.root() / "sub");
  t.write("sub/x.txt", "x\n");
  std::filesystem::create_symlink(fifo, t.root() / "sub/.gitignore");
  ShortDeadline shorter;
  ASSERT_OK_AND_ASSIGN(Worktree wt, Worktree::open(t.root()));
  // libgit2 reads an ignore file it cannot open as absent: the work goes on, or fails; it ends.
  EXPECT_TRUE(returns_by_itself(fifo, [&] { (void)wt.status(); }));
  EXPECT_TRUE(returns_by_itself(fifo, [&] { (void)git::is_ignored(t.root(), "sub/x.txt"); }));
  // Once the link is gone the same work succeeds: nothing was left broken.
  std::filesystem::remove(t.root() / "sub/.gitignore");
  ASSERT_OK_AND_ASSIGN(std::string status, wt.status());
  EXPECT_NE(status.find("sub/"), std::string::npos) << status;
}
