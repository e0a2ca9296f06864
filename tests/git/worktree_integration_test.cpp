// Loop worktrees: add, list, archive, remove — cross-checked with `git worktree list` and the CLI.
#include <cstdlib>
#include <map>

#include <loopr/core/clean_checkpoint.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/core/sweep_handoff.hpp>
#include <loopr/core/worktree_sweep.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>

#include "git/checkout_filters.hpp"
#include "git/git_test_repo.hpp"
#include "git/libgit2.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::Repository;
using loopr::git::Worktree;

namespace {

// `git worktree list --porcelain` as path -> branch (short name), main work tree included.
std::map<std::string, std::string> cli_worktrees(const std::filesystem::path& root) {
  std::map<std::string, std::string> out;
  std::string path;
  for (const std::string& line : lines_of(run_git(root, "worktree list --porcelain"))) {
    if (line.rfind("worktree ", 0) == 0) path = line.substr(9);
    if (line.rfind("branch refs/heads/", 0) == 0) out[path] = line.substr(18);
  }
  return out;
}

Worktree add_loop(const Repository& repo, const std::string& loop_id) {
  std::string branch = git::loop_branch("001", loop_id);
  auto has = repo.has_branch(git::integration_branch("001"));
  EXPECT_TRUE(has.ok());
  if (has.ok() && !*has) {
    EXPECT_TRUE(repo.create_branch(git::integration_branch("001"), "trunk").ok());
  }
  EXPECT_TRUE(repo.create_branch(branch, git::integration_branch("001")).ok());
  auto wt = repo.add_worktree(loop_id, branch);
  EXPECT_TRUE(wt.ok()) << (wt.ok() ? "" : wt.error().message);
  return std::move(wt).value();
}

}  // namespace

TEST(WorktreeTest, AddedWorktreesAreWhatGitWorktreeListShows) {
  TestRepo t;
  Repository repo = t.open();
  Worktree a = add_loop(repo, "001");
  Worktree b = add_loop(repo, "001-002");
  EXPECT_EQ(a.path(), RepoPaths(t.root()).worktree("001"));
  EXPECT_EQ(read_file(b.path() / "README.md"), "# test repo\n");
  EXPECT_EQ(run_git(b.path(), "status --porcelain"), "");

  auto cli = cli_worktrees(t.root());
  EXPECT_EQ(cli.size(), 3u);
  EXPECT_EQ(cli[t.root().string()], "trunk");
  EXPECT_EQ(cli[a.path().string()], git::loop_branch("001", "001"));
  EXPECT_EQ(cli[b.path().string()], git::loop_branch("001", "001-002"));

  ASSERT_OK_AND_ASSIGN(auto listed, repo.list_worktrees());
  ASSERT_EQ(listed.size(), 2u);
  for (const git::WorktreeInfo& info : listed) {
    EXPECT_EQ(cli[info.path], info.branch) << info.name;
    EXPECT_TRUE(info.valid);
    EXPECT_FALSE(info.locked);
    EXPECT_EQ(info.sha, git_line(t.root(), "rev-parse " + info.branch));
  }
  EXPECT_EQ(listed[0].name, "001");
  EXPECT_EQ(listed[1].name, "001-002");
  // The main work tree still sees itself clean: loopr's folders are ignored.
  EXPECT_EQ(run_git(t.root(), "status --porcelain"), "");
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST(WorktreeTest, CliCommitInsideALoopWorktreeIsSeenByLoopr) {
  TestRepo t;
  Repository repo = t.open();
  Worktree wt = add_loop(repo, "001-002");
  write_file(wt.path() / "by-hand.txt", "made with the git CLI\n");
  std::string sha = t.commit_all("commit by hand", wt.path());

  ASSERT_OK_AND_ASSIGN(std::string head, wt.head_sha());
  EXPECT_EQ(head, sha);
  ASSERT_OK_AND_ASSIGN(std::string tip, repo.branch_sha(git::loop_branch("001", "001-002")));
  EXPECT_EQ(tip, sha);
  ASSERT_OK_AND_ASSIGN(auto log, wt.log(1));
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], git_line(wt.path(), "log --oneline --no-decorate -n 1"));
  ASSERT_OK_AND_ASSIGN(std::string status, wt.status());
  EXPECT_EQ(status, "");
  ASSERT_OK_AND_ASSIGN(Worktree reopened, Worktree::open(wt.path()));
  ASSERT_OK_AND_ASSIGN(std::string branch, reopened.branch());
  EXPECT_EQ(branch, git::loop_branch("001", "001-002"));
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST(WorktreeTest, AddRefusesWhatWouldClobberOrCannotWork) {
  TestRepo t;
  Repository repo = t.open();
  Worktree wt = add_loop(repo, "001");

  auto twice = repo.add_worktree("001", git::loop_branch("001", "001"));
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, ErrorCode::already_exists);

  auto checked_out = repo.add_worktree("other", git::loop_branch("001", "001"));
  ASSERT_FALSE(checked_out.ok());
  EXPECT_EQ(checked_out.error().code, ErrorCode::conflict);

  auto no_branch = repo.add_worktree("002", "no-such-branch");
  ASSERT_FALSE(no_branch.ok());
  EXPECT_EQ(no_branch.error().code, ErrorCode::not_found);

  // A folder that is in the way is never overwritten.
  ASSERT_OK(repo.create_branch("spare", "trunk"));
  write_file(RepoPaths(t.root()).worktree("003") / "precious.txt", "mine\n");
  auto in_the_way = repo.add_worktree("003", "spare");
  ASSERT_FALSE(in_the_way.ok());
  EXPECT_EQ(in_the_way.error().code, ErrorCode::already_exists);
  EXPECT_EQ(read_file(RepoPaths(t.root()).worktree("003") / "precious.txt"), "mine\n");

  auto bad_name = repo.add_worktree("../escape", "spare");
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.error().code, ErrorCode::invalid_argument);

  EXPECT_EQ(cli_worktrees(t.root()).size(), 2u);
  EXPECT_TRUE(fsck_clean(t.root()));
}

// Where a branch is checked out is read from git's HEAD files (not by opening every worktree):
// the main work tree and a linked one count, a registration whose folder is gone does not, and a
// worktree the git CLI made is seen like loopr's own. The files loopr writes for a worktree are
// the ones the CLI reads (`git -C <worktree> status` works, `git worktree list` names the branch).
TEST(WorktreeTest, CheckedOutBranchesAreFoundFromHeadFiles) {
  TestRepo t;
  Repository repo = t.open();
  auto in_main = repo.add_worktree("main-branch", "trunk");
  ASSERT_FALSE(in_main.ok());
  EXPECT_EQ(in_main.error().code, ErrorCode::conflict);

  ASSERT_OK(repo.create_branch("by-cli", "trunk"));
  run_git(t.root(), "worktree add -q " + (t.root().parent_path() / "cli-wt").string() + " by-cli");
  auto in_cli = repo.add_worktree("cli-branch", "by-cli");
  ASSERT_FALSE(in_cli.ok());
  EXPECT_EQ(in_cli.error().code, ErrorCode::conflict);
  auto delete_cli = repo.delete_branch("by-cli");
  ASSERT_FALSE(delete_cli.ok());
  EXPECT_EQ(delete_cli.error().code, ErrorCode::conflict);

  Worktree wt = add_loop(repo, "001");
  EXPECT_EQ(run_git(wt.path(), "rev-parse --abbrev-ref HEAD"),
            git::loop_branch("001", "001") + "\n");
  EXPECT_EQ(run_git(wt.path(), "status --porcelain"), "");
  EXPECT_EQ(cli_worktrees(t.root())[wt.path().string()], git::loop_branch("001", "001"));
  auto delete_loop = repo.delete_branch(git::loop_branch("001", "001"));
  ASSERT_FALSE(delete_loop.ok());
  EXPECT_EQ(delete_loop.error().code, ErrorCode::conflict);

  // Its folder deleted by hand: the branch is free again (git itself would say "prunable").
  std::filesystem::remove_all(wt.path());
  ASSERT_OK(repo.delete_branch(git::loop_branch("001", "001")));
  run_git(t.root(), "worktree remove --force " + (t.root().parent_path() / "cli-wt").string());
  run_git(t.root(), "worktree prune");
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST(WorktreeTest, AFolderDeletedByHandCanBeAddedAgain) {
  TestRepo t;
  Repository repo = t.open();
  Worktree wt = add_loop(repo, "001");
  std::filesystem::remove_all(wt.path());
  ASSERT_OK_AND_ASSIGN(auto listed, repo.list_worktrees());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_FALSE(listed[0].valid);
  EXPECT_EQ(listed[0].branch, git::loop_branch("001", "001"));
  EXPECT_FALSE(repo.worktree("001").ok());

  ASSERT_OK_AND_ASSIGN(Worktree again, repo.add_worktree("001", git::loop_branch("001", "001")));
  EXPECT_EQ(read_file(again.path() / "shared.txt"), "line 1\nline 2\nline 3\n");
  ASSERT_OK_AND_ASSIGN(Worktree found, repo.worktree("001"));
  EXPECT_EQ(found.path(), again.path());
  EXPECT_EQ(cli_worktrees(t.root()).size(), 2u);
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST(WorktreeTest, RemoveRefusesUncommittedWorkUnlessForcedAndKeepsTheBranch) {
  TestRepo t;
  Repository repo = t.open();
  Worktree wt = add_loop(repo, "001");
  write_file(wt.path() / "unsaved.txt", "work in progress\n");

  auto refused = repo.remove_worktree("001");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::conflict);
  EXPECT_EQ(read_file(wt.path() / "unsaved.txt"), "work in progress\n");

  ASSERT_OK(repo.remove_worktree("001", git::RemoveMode::force));
  EXPECT_FALSE(std::filesystem::exists(wt.path()));
  EXPECT_EQ(cli_worktrees(t.root()).size(), 1u);
  ASSERT_OK_AND_ASSIGN(bool kept, repo.has_branch(git::loop_branch("001", "001")));
  EXPECT_TRUE(kept);

  // A clean one goes without force.
  Worktree clean = add_loop(repo, "001-002");
  ASSERT_OK(repo.remove_worktree("001-002"));
  EXPECT_FALSE(std::filesystem::exists(clean.path()));
  auto gone = repo.remove_worktree("001-002");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::not_found);
  EXPECT_TRUE(fsck_clean(t.root()));
}

// Issue 47 item 6: what is kept in memory for a work tree (its clean checkpoint, a handed-over
// sweep) goes when the work tree does, so a daemon that runs for months keeps nothing of the
// work trees it removed.
TEST(WorktreeTest, RemovingAWorkTreeForgetsWhatWasKeptForIt) {
  TestRepo t;
  Repository repo = t.open();
  Worktree wt = add_loop(repo, "001");
  const std::size_t kept_before = clean_checkpoints();
  write_file(wt.path() / "made.txt", "by a command\n");
  SweptListing listing;
  const SweepVisitor keep = [&listing](const std::string& rel, const struct stat* st) {
    listing.add(rel, st);
  };
  ASSERT_TRUE(sweep_worktree(wt.path(), &keep).failed.empty());
  hand_over_sweep(wt.path(), std::move(listing));
  ASSERT_OK(Worktree::checkpoint_at(wt.path(), "checkpoint", /*after_command=*/true));
  ASSERT_EQ(clean_checkpoints(), kept_before + 1) << "the checkpoint kept no clean state";
  // And a sweep handed over by a later command, not yet taken.
  hand_over_sweep(wt.path(), SweptListing{});
  const std::size_t handed_before = handed_sweeps();

  ASSERT_OK(repo.remove_worktree("001", git::RemoveMode::force));
  EXPECT_EQ(clean_checkpoints(), kept_before) << "the clean state outlived its work tree";
  EXPECT_EQ(handed_sweeps(), handed_before - 1) << "the handed sweep outlived its work tree";
}

TEST(WorktreeTest, ArchiveKeepsEveryCommitOnAnArchiveBranch) {
  TestRepo t;
  Repository repo = t.open();
  Worktree wt = add_loop(repo, "001-002");
  write_file(wt.path() / "done.txt", "committed\n");
  ASSERT_OK(wt.checkpoint("loop 001-002 iteration 1"));
  write_file(wt.path() / "left.txt", "not yet committed\n");
  write_file(wt.path() / "build.log", "ignored output\n");

  ASSERT_OK_AND_ASSIGN(git::ArchiveOutcome archived,
                       repo.archive_worktree("001-002", "loop 001-002: archived"));
  EXPECT_EQ(archived.branch, "loopr/archive/001-002");
  EXPECT_TRUE(archived.committed_leftovers);
  EXPECT_EQ(archived.sha, git_line(t.root(), "rev-parse loopr/archive/001-002"));
  EXPECT_EQ(run_git(t.root(), "show loopr/archive/001-002:left.txt"), "not yet committed\n");
  EXPECT_EQ(run_git(t.root(), "show loopr/archive/001-002:done.txt"), "committed\n");
  EXPECT_EQ(git_line(t.root(), "log -1 --format=%s loopr/archive/001-002"),
            "loop 001-002: archived");
  EXPECT_FALSE(std::filesystem::exists(wt.path()));
  EXPECT_EQ(cli_worktrees(t.root()).size(), 1u);
  ASSERT_OK_AND_ASSIGN(bool old_branch, repo.has_branch(git::loop_branch("001", "001-002")));
  EXPECT_FALSE(old_branch);

  // A re-run of the same loop gets its branch name back; archiving it again does not clobber.
  Worktree rerun = add_loop(repo, "001-002");
  ASSERT_OK_AND_ASSIGN(git::ArchiveOutcome second, repo.archive_worktree("001-002", "again"));
  EXPECT_EQ(second.branch, "loopr/archive/001-002-2");
  EXPECT_FALSE(second.committed_leftovers);
  EXPECT_EQ(git_line(t.root(), "rev-parse loopr/archive/001-002"), archived.sha);
  EXPECT_TRUE(fsck_clean(t.root()));
}

// The checkout skips libgit2's per-file attribute lookups only when no filter can apply
// (git/checkout_filters.hpp): every source of attributes and core.autocrlf keeps them on.
TEST(WorktreeTest, CheckoutRunsTheFiltersEveryAttributeSourceOrAutocrlfAsksFor) {
  {  // a .gitattributes deep in the tree: eol conversion and ident expansion
    TestRepo t;
    t.write("deep/er/.gitattributes", "*.txt text eol=crlf\n*.c ident\n");
    t.write("deep/er/a.txt", "one\ntwo\n");
    t.write("deep/er/b.c", "/* $Id$ */\n");
    t.commit_all("attributes");
    Worktree wt = add_loop(t.open(), "001");
    EXPECT_EQ(read_file(wt.path() / "deep/er/a.txt"), "one\r\ntwo\r\n");
    EXPECT_NE(read_file(wt.path() / "deep/er/b.c"), "/* $Id$ */\n");  // $Id: <blob sha> $
    EXPECT_EQ(run_git(wt.path(), "status --porcelain"), "");
  }
  {  // the repository's info/attributes
    TestRepo t;
    t.write("a.txt", "one\n");
    t.commit_all("a");
    write_file(t.root() / ".git/info/attributes", "*.txt text eol=crlf\n");
    Worktree wt = add_loop(t.open(), "001");
    EXPECT_EQ(read_file(wt.path() / "a.txt"), "one\r\n");
  }
  {  // core.autocrlf, no attributes anywhere
    TestRepo t;
    t.write("a.txt", "one\n");
    t.commit_all("a");
    run_git(t.root(), "config core.autocrlf true");
    Worktree wt = add_loop(t.open(), "001");
    EXPECT_EQ(read_file(wt.path() / "a.txt"), "one\r\n");
  }
}

TEST(WorktreeTest, CheckoutWithoutAnyAttributeSourceSkipsTheFiltersAndWritesTheBlobs) {
  for (const char* outside : {"/etc/gitattributes"})
    if (std::filesystem::exists(outside)) GTEST_SKIP() << outside << " exists on this machine";
  TestRepo t;
  t.write("a.txt", "one\r\ntwo\n");
  t.write("sub/b.c", "/* $Id$ */\n");
  t.commit_all("plain");
  // open_repo initialises libgit2 too (this test may run alone).
  ASSERT_OK_AND_ASSIGN(git::detail::RepoPtr repo,
                       git::detail::open_repo(t.root(), git::detail::OpenMode::exact));
  git_object* tree = nullptr;
  ASSERT_EQ(git_revparse_single(&tree, repo.get(), "HEAD^{tree}"), 0);
  git::detail::ObjectPtr owned(tree);
  const char* home = std::getenv("HOME");
  if (home && std::filesystem::exists(std::filesystem::path(home) / ".config/git/attributes"))
    GTEST_SKIP() << "~/.config/git/attributes exists on this machine";
  EXPECT_FALSE(git::detail::checkout_may_filter(repo.get(), reinterpret_cast<git_tree*>(tree)));

  Worktree wt = add_loop(t.open(), "001");
  EXPECT_EQ(read_file(wt.path() / "a.txt"), "one\r\ntwo\n");
  EXPECT_EQ(read_file(wt.path() / "sub/b.c"), "/* $Id$ */\n");
  EXPECT_EQ(run_git(wt.path(), "status --porcelain"), "");

  // Any one source turns them back on.
  write_file(t.root() / ".git/info/attributes", "*.c ident\n");
  EXPECT_TRUE(git::detail::checkout_may_filter(repo.get(), reinterpret_cast<git_tree*>(tree)));
}
