// Checkpoint commits and the state shown in prompts (status, diff, log, head), against the CLI.
#include <git2.h>
#include <stdlib.h>

#include <loopr/core/repo_paths.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>

#include "git/git_test_repo.hpp"
#include "git/libgit2.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::CommitOutcome;
using loopr::git::Repository;
using loopr::git::Worktree;

namespace {

Worktree loop_worktree(const TestRepo& t, const std::string& loop_id = "001-002") {
  Repository repo = t.open();
  EXPECT_TRUE(repo.create_branch(git::loop_branch("001", loop_id), "trunk").ok());
  auto wt = repo.add_worktree(loop_id, git::loop_branch("001", loop_id));
  EXPECT_TRUE(wt.ok()) << (wt.ok() ? "" : wt.error().message);
  return std::move(wt).value();
}

// A test repository with loop 001-002's worktree on its own branch made from `trunk`.
class LoopWorktreeTest : public ::testing::Test {
 protected:
  TestRepo t;
  Worktree wt = loop_worktree(t);
};
using CheckpointTest = LoopWorktreeTest;
using StatusTest = LoopWorktreeTest;
using DiffTest = LoopWorktreeTest;
using LogTest = LoopWorktreeTest;

// Sets (or unsets) an environment variable for a scope and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A machine where git knows no identity: HOME is an empty folder, no XDG or system config.
// libgit2 derives its config search paths from the environment once, so they are re-derived
// here, and again from the restored environment when the scope ends.
class NoGitIdentity {
 public:
  NoGitIdentity()
      : home_env_("HOME", home_.str().c_str()),
        xdg_env_("XDG_CONFIG_HOME", nullptr),
        nosystem_env_("GIT_CONFIG_NOSYSTEM", "1") {
    git::detail::ensure_libgit2();
    for (int level : {GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_XDG}) {
      git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, nullptr);
    }
    // libgit2 ignores GIT_CONFIG_NOSYSTEM; point its system level at the empty folder instead.
    git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_SYSTEM, home_.str().c_str());
  }

 private:
  // Declared first, so destroyed last: after the variables below are restored.
  struct ResetSearchPaths {
    ~ResetSearchPaths() {
      for (int level : {GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_SYSTEM}) {
        git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, nullptr);
      }
    }
  } reset_;
  TempDir home_{"loopr-home"};
  ScopedEnv home_env_;
  ScopedEnv xdg_env_;
  ScopedEnv nosystem_env_;
};

}  // namespace

TEST_F(CheckpointTest, CommitsNewModifiedAndDeletedFilesHonouringGitignore) {
  write_file(wt.path() / "new/file.txt", "new\n");
  write_file(wt.path() / "shared.txt", "line 1\nchanged\nline 3\n");
  std::filesystem::remove(wt.path() / "README.md");
  write_file(wt.path() / "debug.log", "ignored by *.log\n");

  ASSERT_OK_AND_ASSIGN(CommitOutcome c, wt.checkpoint("loop 001-002 iteration 1"));
  EXPECT_EQ(c.kind, CommitOutcome::Kind::committed);
  EXPECT_EQ(c.sha, git_line(wt.path(), "rev-parse HEAD"));
  EXPECT_EQ(c.sha, git_line(t.root(), "rev-parse " + git::loop_branch("001", "001-002")));
  EXPECT_EQ(run_git(wt.path(), "show --name-status --format= HEAD"),
            "D\tREADME.md\nA\tnew/file.txt\nM\tshared.txt\n");
  EXPECT_EQ(git_line(wt.path(), "log -1 --format=%B"), "loop 001-002 iteration 1");
  // The CLI agrees nothing is left (the ignored file stays on disk, untracked).
  EXPECT_EQ(run_git(wt.path(), "status --porcelain"), "");
  EXPECT_TRUE(std::filesystem::exists(wt.path() / "debug.log"));
  // The main work tree and its branch were not touched.
  EXPECT_EQ(run_git(t.root(), "status --porcelain"), "");
  EXPECT_EQ(t.read("README.md"), "# test repo\n");
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST_F(CheckpointTest, NothingToCommitIsItsOwnOutcomeAndMakesNoCommit) {
  std::string before = git_line(wt.path(), "rev-parse HEAD");
  ASSERT_OK_AND_ASSIGN(CommitOutcome c, wt.checkpoint("nothing"));
  EXPECT_EQ(c.kind, CommitOutcome::Kind::nothing_to_commit);
  EXPECT_EQ(c.sha, before);
  // An ignored file alone is nothing either; so is a file changed and changed back.
  write_file(wt.path() / "x.log", "ignored\n");
  write_file(wt.path() / "shared.txt", "tmp\n");
  write_file(wt.path() / "shared.txt", "line 1\nline 2\nline 3\n");
  ASSERT_OK_AND_ASSIGN(c, wt.checkpoint("still nothing"));
  EXPECT_EQ(c.kind, CommitOutcome::Kind::nothing_to_commit);
  EXPECT_EQ(git_line(wt.path(), "rev-parse HEAD"), before);
  EXPECT_EQ(git_line(wt.path(), "rev-list --count HEAD"), "1");
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST_F(CheckpointTest, EmptyMessageIsRefused) {
  write_file(wt.path() / "a.txt", "a\n");
  auto c = wt.checkpoint("  \n");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(git_line(wt.path(), "rev-list --count HEAD"), "1");
  EXPECT_TRUE(fsck_clean(t.root()));
}

// The engine's one-open checkpoint: the same commit as open + checkpoint, and the same refusals.
TEST_F(CheckpointTest, CheckpointAtCommitsTheWorkTreeAtAPath) {
  write_file(wt.path() / "new.txt", "new\n");
  ASSERT_OK_AND_ASSIGN(CommitOutcome c, Worktree::checkpoint_at(wt.path(), "iteration 1"));
  EXPECT_EQ(c.kind, CommitOutcome::Kind::committed);
  EXPECT_EQ(c.sha, git_line(wt.path(), "rev-parse HEAD"));
  EXPECT_EQ(git_line(wt.path(), "log -1 --format=%s"), "iteration 1");
  EXPECT_EQ(git_line(wt.path(), "show --name-only --format= HEAD"), "new.txt");
  ASSERT_OK_AND_ASSIGN(c, Worktree::checkpoint_at(wt.path(), "iteration 2"));
  EXPECT_EQ(c.kind, CommitOutcome::Kind::nothing_to_commit);
  EXPECT_FALSE(Worktree::checkpoint_at(wt.path(), " \n").ok());
  EXPECT_FALSE(Worktree::checkpoint_at(wt.path() / "no-such-folder", "x").ok());
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST_F(CheckpointTest, NeverCommitsLooprPrivateFoldersEvenWhenNotIgnored) {
  write_file(wt.path() / ".gitignore", "");  // a repository that forgot loopr's folders
  write_file(wt.path() / ".loopr/state/000001.log", "rocksdb\n");
  write_file(wt.path() / ".loopr/logs/loop.txt", "log\n");
  write_file(wt.path() / ".loopr/plans/001-x.plan.md", "# Plan\n");
  ASSERT_OK_AND_ASSIGN(CommitOutcome c, wt.checkpoint("plan"));
  ASSERT_EQ(c.kind, CommitOutcome::Kind::committed);
  EXPECT_EQ(run_git(wt.path(), "show --name-only --format= HEAD"),
            ".gitignore\n.loopr/plans/001-x.plan.md\n");
  ASSERT_OK_AND_ASSIGN(std::string diff, wt.diff());
  EXPECT_EQ(diff.find(".loopr/state"), std::string::npos) << diff;
  EXPECT_TRUE(fsck_clean(t.root()));
}

// The checkout's paths the sandbox shows in a worktree (`sandbox.read_only: [node_modules,
// local.env]`) leave an empty folder or file (or, with `sandbox: none`, a link) as their mount
// point; the executor lists them in the worktree's git admin folder, and no checkpoint commits
// them. Other new files are committed as ever; a tracked file of that name stays tracked.
TEST_F(CheckpointTest, NeverCommitsTheCheckoutPathsShownInTheWorktree) {
  std::string admin = run_git(wt.path(), "rev-parse --git-dir");
  while (!admin.empty() && admin.back() == '\n') admin.pop_back();
  write_file(std::filesystem::path(admin) / kWorktreeMountsFile,
             "local.env\nnode_modules\n.venv\n");
  write_file(wt.path() / "local.env", "");
  std::filesystem::create_directories(wt.path() / ".venv");
  std::filesystem::create_symlink("/nonexistent/checkout/node_modules", wt.path() / "node_modules");
  write_file(wt.path() / "src/new.py", "x = 1\n");
  write_file(wt.path() / "src/local.env", "a file of that name elsewhere\n");
  ASSERT_OK_AND_ASSIGN(CommitOutcome c, wt.checkpoint("work"));
  ASSERT_EQ(c.kind, CommitOutcome::Kind::committed);
  EXPECT_EQ(run_git(wt.path(), "show --name-only --format= HEAD"), "src/local.env\nsrc/new.py\n");
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST_F(CheckpointTest, AuthorAndCommitterComeFromGitConfig) {
  run_git(t.root(), "config user.name 'Ada Lovelace'");
  run_git(t.root(), "config user.email ada@example.org");
  write_file(wt.path() / "a.txt", "a\n");
  ASSERT_OK(wt.checkpoint("by ada"));
  EXPECT_EQ(git_line(wt.path(), "log -1 --format='%an <%ae>|%cn <%ce>'"),
            "Ada Lovelace <ada@example.org>|Ada Lovelace <ada@example.org>");
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST_F(CheckpointTest, FallsBackToLooprIdentityWithoutGitConfig) {
  run_git(t.root(), "config --unset user.name");
  run_git(t.root(), "config --unset user.email");
  write_file(wt.path() / "a.txt", "a\n");
  {
    NoGitIdentity no_identity;
    ASSERT_OK_AND_ASSIGN(git::Identity who, t.open().identity());
    EXPECT_EQ(who.name, "loopr");
    EXPECT_EQ(who.email, "loopr@localhost");
    ASSERT_OK(wt.checkpoint("anonymous"));
  }
  EXPECT_EQ(git_line(wt.path(), "log -1 --format='%an <%ae>|%cn <%ce>'"),
            "loopr <loopr@localhost>|loopr <loopr@localhost>");
  // The environment is back: loopr sees whatever identity the CLI sees on this machine.
  CommandOutput cli_name = run_command("git config user.name", t.root().string());
  ASSERT_OK_AND_ASSIGN(git::Identity restored, t.open().identity());
  if (cli_name.exit_code == 0) {
    EXPECT_EQ(restored.name + "\n", cli_name.output);
  } else {
    EXPECT_EQ(restored.name, "loopr");
  }
  run_git(t.root(), "config user.name 'Back Again'");
  ASSERT_OK_AND_ASSIGN(restored, t.open().identity());
  EXPECT_EQ(restored.name, "Back Again");
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST_F(StatusTest, AgreesWithGitStatusPorcelain) {
  const auto& p = wt.path();
  write_file(p / "tracked/a.txt", "a\n");
  write_file(p / "tracked/b.txt", "b\n");
  write_file(p / "to-rename.txt", "some content that survives a rename\n");
  write_file(p / "typechange", "file\n");
  ASSERT_OK(wt.checkpoint("more files"));

  write_file(p / "shared.txt", "modified in work tree\n");  // " M"
  write_file(p / "tracked/a.txt", "staged\n");              // "M "
  run_git(p, "add tracked/a.txt");
  write_file(p / "tracked/a.txt", "staged then modified\n");  // "MM"
  std::filesystem::remove(p / "tracked/b.txt");               // " D"
  run_git(p, "rm -q README.md");                              // "D "
  run_git(p, "mv to-rename.txt renamed.txt");                 // "R "
  write_file(p / "added.txt", "new\n");                       // "A "
  run_git(p, "add added.txt");
  std::filesystem::remove(p / "typechange");
  std::filesystem::create_symlink("shared.txt", p / "typechange");  // " T"
  write_file(p / "untracked dir/inner.txt", "u\n");                 // "?? dir/"
  write_file(p / "quote\"d.txt", "q\n");
  write_file(p / "\xc3\xbcml.txt", "u\n");
  write_file(p / "only-ignored/x.log", "ignored\n");  // not shown
  write_file(p / "z.log", "ignored\n");

  ASSERT_OK_AND_ASSIGN(std::string status, wt.status());
  EXPECT_EQ(status, run_git(p, "status --porcelain"));
  EXPECT_NE(status, "");
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST_F(StatusTest, AgreesWithGitOnConflictsLeftByAManualMerge) {
  const auto& p = wt.path();
  write_file(p / "gone-there.txt", "x\n");
  write_file(p / "gone-here.txt", "y\n");
  ASSERT_OK(wt.checkpoint("base"));
  run_git(p, "branch other");
  // One side's work: `side` in shared.txt and both-added.txt, `removed` deleted, `edited`
  // rewritten to `edit`; each side removes the file the other one edits.
  auto change_side = [&](const std::string& side, const char* removed, const char* edited,
                         const std::string& edit) {
    write_file(p / "shared.txt", side + "\n");
    std::filesystem::remove(p / removed);
    write_file(p / edited, edit);
    write_file(p / "both-added.txt", side + "\n");
  };
  change_side("ours", "gone-here.txt", "gone-there.txt", "edited here\n");
  ASSERT_OK(wt.checkpoint("ours"));
  run_git(p, "checkout -q other");
  change_side("theirs", "gone-there.txt", "gone-here.txt", "edited there\n");
  t.commit_all("theirs", p);
  run_git(p, "checkout -q " + git::loop_branch("001", "001-002"));
  run_command("git merge other", p.string());  // fails with conflicts, on purpose

  ASSERT_OK_AND_ASSIGN(std::string status, wt.status());
  EXPECT_EQ(status, run_git(p, "status --porcelain"));
  EXPECT_NE(status.find("UU shared.txt"), std::string::npos) << status;
  EXPECT_NE(status.find("AA both-added.txt"), std::string::npos) << status;
  run_git(p, "merge --abort");
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST_F(StatusTest, MainWorkTreeWithLoopWorktreesInsideAgreesWithGit) {
  t.write("user-edit.txt", "the user works here too\n");
  ASSERT_OK_AND_ASSIGN(std::string status, t.open().main_worktree().status());
  EXPECT_EQ(status, run_git(t.root(), "status --porcelain"));
  EXPECT_EQ(status, "?? user-edit.txt\n");
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST_F(DiffTest, ShowsTrackedChangesLikeGitDiffHeadAndNewFilesToo) {
  write_file(wt.path() / "shared.txt", "line 1\nline two\nline 3\n");
  std::filesystem::remove(wt.path() / "README.md");
  ASSERT_OK_AND_ASSIGN(std::string tracked_only, wt.diff());
  EXPECT_EQ(tracked_only, run_git(wt.path(), "diff HEAD"));

  write_file(wt.path() / "brand-new.txt", "hello\n");
  ASSERT_OK_AND_ASSIGN(std::string with_new, wt.diff());
  EXPECT_NE(with_new.find("+++ b/brand-new.txt\n"), std::string::npos) << with_new;
  EXPECT_NE(with_new.find("+hello\n"), std::string::npos) << with_new;
  // Exactly what the next checkpoint will commit: after it, the diff is empty.
  ASSERT_OK(wt.checkpoint("commit it all"));
  ASSERT_OK_AND_ASSIGN(std::string after, wt.diff());
  EXPECT_EQ(after, "");
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST_F(DiffTest, LongDiffIsCutWithAMarkerCountingTheRest) {
  std::string big;
  for (int i = 0; i < 1000; ++i) big += "generated line " + std::to_string(i) + "\n";
  write_file(wt.path() / "big.txt", big);
  ASSERT_OK_AND_ASSIGN(std::string full, wt.diff({100000, 10 << 20}));
  std::size_t total = lines_of(full).size();
  EXPECT_GT(total, 1000u);

  ASSERT_OK_AND_ASSIGN(std::string capped, wt.diff({50, 1 << 20}));
  auto lines = lines_of(capped);
  ASSERT_EQ(lines.size(), 51u);
  EXPECT_EQ(lines.back(), "… " + std::to_string(total - 50) + " more lines");
  EXPECT_EQ(full.substr(0, capped.size() - lines.back().size() - 1),
            capped.substr(0, capped.size() - lines.back().size() - 1));

  ASSERT_OK_AND_ASSIGN(std::string by_bytes, wt.diff({100000, 2000}));
  EXPECT_LE(by_bytes.size(), 2000u + 40u);
  EXPECT_NE(by_bytes.find(" more lines\n"), std::string::npos);
  EXPECT_TRUE(fsck_clean(t.root()));
}

TEST_F(LogTest, HeadShaAndLogMatchTheCli) {
  for (int i = 1; i <= 3; ++i) {
    write_file(wt.path() / "f.txt", std::to_string(i) + "\n");
    ASSERT_OK(wt.checkpoint("loop 001-002 iteration " + std::to_string(i)));
  }
  ASSERT_OK_AND_ASSIGN(std::string head, wt.head_sha());
  EXPECT_EQ(head, git_line(wt.path(), "rev-parse HEAD"));
  ASSERT_OK_AND_ASSIGN(auto log, wt.log(3));
  EXPECT_EQ(log, lines_of(run_git(wt.path(), "log --oneline --no-decorate -n 3")));
  EXPECT_NE(log[0].find("loop 001-002 iteration 3"), std::string::npos);
  EXPECT_TRUE(fsck_clean(t.root()));
}
