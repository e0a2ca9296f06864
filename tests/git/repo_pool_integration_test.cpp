// Repository handles taken back from the pool (git/repo_pool.cpp): fewer opens, and never an
// answer a fresh open would not give — after the config, the index, the `.git` file or the work
// tree itself changed behind the handle's back. Real repositories changed with the git CLI.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include <loopr/git/repository.hpp>
#include <loopr/git/worktree.hpp>

#include "git/git_test_repo.hpp"
#include "git/libgit2.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::Worktree;
using loopr::git::detail::open_repo;
using loopr::git::detail::OpenMode;
using loopr::git::detail::repository_opens;

namespace {

// Opens and releases `path` until a handle is kept (the first open after a config file was
// written is used once: its times are too close to tell a later change apart); true once an
// open is served from the pool.
bool pool_serves(const std::filesystem::path& path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    { auto warm = open_repo(path, OpenMode::exact); }
    std::uint64_t before = repository_opens();
    { auto again = open_repo(path, OpenMode::exact); }
    if (repository_opens() == before) return true;
    std::this_thread::yield();
  }
  return false;
}

std::string status_of(const Worktree& wt) {
  auto s = wt.status();
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : "<error>";
}

}  // namespace

TEST(RepoPoolIntegrationTest, AnOpenOfTheSameWorkTreeTakesBackTheReleasedHandle) {
  TestRepo t;
  ASSERT_TRUE(pool_serves(t.root()));
  ASSERT_OK_AND_ASSIGN(Worktree wt, Worktree::open(t.root()));
  std::uint64_t before = repository_opens();
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string head, wt.head_sha());
    EXPECT_EQ(head, git_line(t.root(), "rev-parse HEAD"));
  }
  EXPECT_EQ(repository_opens(), before) << "5 reads opened the repository again";

  // Two users at once each get a handle of their own.
  {
    ASSERT_OK_AND_ASSIGN(auto a, open_repo(t.root(), OpenMode::exact));
    ASSERT_OK_AND_ASSIGN(auto b, open_repo(t.root(), OpenMode::exact));
    EXPECT_NE(a.get(), b.get());
  }
  // Both were kept: two at once again open nothing.
  before = repository_opens();
  {
    ASSERT_OK_AND_ASSIGN(auto a, open_repo(t.root(), OpenMode::exact));
    ASSERT_OK_AND_ASSIGN(auto b, open_repo(t.root(), OpenMode::exact));
    EXPECT_NE(a.get(), b.get());
  }
  EXPECT_EQ(repository_opens(), before);
}

// What an open decides from the config (core.bare: is there a work tree at all?) is kept in the
// handle: a changed config file is read again, as a fresh open would.
// proves S3.42
TEST(RepoPoolIntegrationTest, AConfigChangedSinceTheHandleWasOpenedIsReadAgain) {
  TestRepo t;
  ASSERT_TRUE(pool_serves(t.root()));
  ASSERT_OK_AND_ASSIGN(Worktree wt, Worktree::open(t.root()));
  ASSERT_OK_AND_ASSIGN(std::string clean, wt.status());
  EXPECT_EQ(clean, "");

  run_git(t.root(), "config core.bare true");
  auto bare = wt.status();
  EXPECT_FALSE(bare.ok()) << "a bare repository has no status; the handle answered: " << *bare;
  ASSERT_OK_AND_ASSIGN(auto fresh, open_repo(t.root(), OpenMode::exact));
  EXPECT_TRUE(git_repository_is_bare(fresh.get()));

  run_git(t.root(), "config core.bare false");
  ASSERT_OK_AND_ASSIGN(clean, wt.status());
  EXPECT_EQ(clean, "");
}

// What one user staged in the handle's index and never wrote is not what the next one reads.
// proves S3.42
TEST(RepoPoolIntegrationTest, AnIndexChangedInMemoryOnlyIsNotHandedOn) {
  TestRepo t;
  t.write("new.txt", "new\n");
  ASSERT_TRUE(pool_serves(t.root()));
  {
    ASSERT_OK_AND_ASSIGN(auto repo, open_repo(t.root(), OpenMode::exact));
    git_index* index = nullptr;
    ASSERT_EQ(git_repository_index(&index, repo.get()), 0);
    ASSERT_EQ(git_index_add_bypath(index, "new.txt"), 0);
    EXPECT_NE(git_index_get_bypath(index, "new.txt", 0), nullptr);
    git_index_free(index);  // the repository keeps it: never written
  }
  std::uint64_t before = repository_opens();
  ASSERT_OK_AND_ASSIGN(auto repo, open_repo(t.root(), OpenMode::exact));
  EXPECT_EQ(repository_opens(), before) << "the handle was not taken back: nothing tested";
  git_index* index = nullptr;
  ASSERT_EQ(git_repository_index(&index, repo.get()), 0);
  EXPECT_EQ(git_index_get_bypath(index, "new.txt", 0), nullptr);
  git_index_free(index);

  // And what another program stages is seen.
  run_git(t.root(), "add new.txt");
  ASSERT_OK_AND_ASSIGN(Worktree wt, Worktree::open(t.root()));
  EXPECT_EQ(status_of(wt), "A  new.txt\n");
}

// A loop worktree's `.git` file is in the folder its model writes to: a handle follows the file
// as it is now, never where it pointed when the handle was opened.
// proves S3.42
TEST(RepoPoolIntegrationTest, AWorktreesGitFilePointingElsewhereIsFollowedAsAFreshOpenWould) {
  TestRepo t;
  run_git(t.root(), "branch first");
  run_git(t.root(), "branch second");
  std::filesystem::path a = t.dir().path() / "a";
  std::filesystem::path b = t.dir().path() / "b";
  run_git(t.root(), "worktree add -q " + a.string() + " first");
  run_git(t.root(), "worktree add -q " + b.string() + " second");
  ASSERT_TRUE(pool_serves(a));
  ASSERT_OK_AND_ASSIGN(Worktree wt, Worktree::open(a));
  ASSERT_OK_AND_ASSIGN(std::string branch, wt.branch());
  EXPECT_EQ(branch, "first");

  write_file(a / ".git", read_file(b / ".git"));
  ASSERT_OK_AND_ASSIGN(branch, wt.branch());
  EXPECT_EQ(branch, "second");
  EXPECT_EQ(branch, git_line(a, "rev-parse --abbrev-ref HEAD"));
}

// A work tree deleted (its git folder left registered) no longer opens, and one made again at
// the same path on another branch answers for its new branch.
// proves S3.42
TEST(RepoPoolIntegrationTest, AWorkTreeRemovedOrMadeAgainAtTheSamePathIsNotServedFromTheOldHandle) {
  TestRepo t;
  run_git(t.root(), "branch first");
  run_git(t.root(), "branch second");
  std::filesystem::path p = t.dir().path() / "wt";
  run_git(t.root(), "worktree add -q " + p.string() + " first");
  ASSERT_TRUE(pool_serves(p));
  ASSERT_OK_AND_ASSIGN(Worktree wt, Worktree::open(p));

  std::filesystem::remove_all(p);
  auto gone = wt.head_sha();
  ASSERT_FALSE(gone.ok()) << "read " << *gone << " from a deleted work tree";
  EXPECT_EQ(gone.error().code, ErrorCode::not_found);

  run_git(t.root(), "worktree prune");
  run_git(t.root(), "worktree add -q " + p.string() + " second");
  ASSERT_OK_AND_ASSIGN(std::string branch, wt.branch());
  EXPECT_EQ(branch, "second");
  ASSERT_TRUE(pool_serves(p));
  ASSERT_OK_AND_ASSIGN(branch, wt.branch());
  EXPECT_EQ(branch, "second");
  ASSERT_OK_AND_ASSIGN(std::string head, wt.head_sha());
  EXPECT_EQ(head, git_line(p, "rev-parse HEAD"));
}

// The `.git` file sits in the folder a model writes (the sandbox pins it, S1.5; this is the wall
// behind that one): a FIFO put there is not waited on when a kept handle is checked, and the
// work tree no longer opens, as with a fresh open.
// proves S3.42
TEST(RepoPoolIntegrationTest, AFifoInPlaceOfAWorktreesGitFileIsNotWaitedOn) {
  TestRepo t;
  run_git(t.root(), "branch first");
  std::filesystem::path p = t.dir().path() / "wt";
  run_git(t.root(), "worktree add -q " + p.string() + " first");
  ASSERT_TRUE(pool_serves(p));
  ASSERT_OK_AND_ASSIGN(Worktree wt, Worktree::open(p));

  std::filesystem::remove(p / ".git");
  ASSERT_EQ(::mkfifo((p / ".git").c_str(), 0600), 0);
  auto read = std::async(std::launch::async, [&] { return wt.head_sha(); });
  if (read.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    // Let each stuck open go (a writer end, as often as a reader waits), then fail.
    while (read.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      int w = ::open((p / ".git").c_str(), O_WRONLY | O_NONBLOCK);
      if (w >= 0) ::close(w);
    }
    FAIL() << "reading a work tree whose .git is a FIFO waited on the FIFO";
  }
  auto head = read.get();
  ASSERT_FALSE(head.ok()) << "read " << *head << " through a FIFO .git";
  EXPECT_EQ(head.error().code, ErrorCode::not_found) << head.error().message;
}
