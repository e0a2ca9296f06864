// A checkpoint stages from the special-file sweep's one walk (git/stage.hpp, issue 32): only
// what differs from the index's stat data is hashed. A command can write anything, so these
// tests write what a hostile one would and check with the git CLI (an independent reader that
// hashes what its own stat check doubts) that the commit holds exactly what `git add -A` would.
#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <map>

#include <loopr/git/branches.hpp>
#include <loopr/git/work_tree_state.hpp>
#include <loopr/git/worktree.hpp>

#include "git/git_test_repo.hpp"
#include "git/libgit2.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::CommitOutcome;
using loopr::git::Worktree;
namespace fs = std::filesystem;

namespace {

// `git ls-tree -r HEAD` as path -> mode.
std::map<std::string, std::string> head_modes(const fs::path& wt) {
  std::map<std::string, std::string> out;
  for (const std::string& line : lines_of(run_git(wt, "ls-tree -r HEAD"))) {
    const auto tab = line.find('\t');
    out[line.substr(tab + 1)] = line.substr(0, line.find(' '));
  }
  return out;
}

struct timespec mtime_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mtim;
}

// Sets the modification time (and the access time) of `p` to `t`, as `touch -r` would.
void set_mtime(const fs::path& p, const struct timespec& t) {
  const struct timespec times[2] = {t, t};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << p;
}

// A checkpoint of `wt` that must stage from the sweep's list (no libgit2 walk of its own).
CommitOutcome checkpoint_from_the_list(const fs::path& wt, const std::string& message) {
  const std::uint64_t git_walks = git::checkpoint_git_walks();
  auto made = Worktree::checkpoint_at(wt, message);
  EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().message);
  EXPECT_EQ(git::checkpoint_git_walks(), git_walks) << "libgit2 walked the work tree";
  return made.ok() ? *made : CommitOutcome{};
}

// Nothing git would stage is left out, and no ignored file is tracked but `tracked.log`
// (added with -f before: a tracked file stays tracked).
void expect_all_committed(const fs::path& wt) {
  EXPECT_EQ(run_git(wt, "status --porcelain"), "");
  const std::string ignored = run_git(wt, "ls-files --cached --ignored --exclude-standard");
  EXPECT_TRUE(ignored.empty() || ignored == "tracked.log\n") << ignored;
}

}  // namespace

TEST(CheckpointWalkTest, EverythingAHostileCommandWritesIsStagedAsGitAddAllWould) {
  TestRepo t;
  t.write("run.sh", "echo run\n");
  t.write("gone.txt", "gone\n");
  t.write("becomes-folder", "file\n");
  t.write("folder/x.txt", "x\n");
  t.write("becomes-link.txt", "link\n");
  t.write("same-size.txt", "aaaa\n");
  t.write("renamed-over.txt", "bbbb\n");
  t.write("tracked.log", "tracked though ignored\n");
  run_git(t.root(), "add -f tracked.log");
  t.commit_all("fixture");
  Worktree wt = integration_loop_worktree(t.open());
  const fs::path w = wt.path();
  checkpoint_from_the_list(w, "iteration 1");

  // A tracked file that the ignore rules match is still staged when it changes.
  write_file(w / "tracked.log", "changed\n");

  // The same size and the same mtime: only ctime (in place) or the inode (renamed over) differ.
  const struct timespec same_size_mtime = mtime_of(w / "same-size.txt");
  write_file(w / "same-size.txt", "AAAA\n");
  set_mtime(w / "same-size.txt", same_size_mtime);
  const struct timespec renamed_mtime = mtime_of(w / "renamed-over.txt");
  write_file(w / "replacement", "BBBB\n");
  set_mtime(w / "replacement", renamed_mtime);
  fs::rename(w / "replacement", w / "renamed-over.txt");
  // The executable bit alone.
  fs::permissions(w / "run.sh", fs::perms::owner_exec, fs::perm_options::add);
  // Removed, and types swapped both ways.
  fs::remove(w / "gone.txt");
  fs::remove(w / "becomes-folder");
  write_file(w / "becomes-folder/inner.txt", "inner\n");
  fs::remove_all(w / "folder");
  write_file(w / "folder", "now a file\n");
  fs::remove(w / "becomes-link.txt");
  fs::create_symlink("README.md", w / "becomes-link.txt");
  fs::create_symlink("/etc/passwd", w / "new-link");
  // New files: one deep in new folders, ignored ones (a whole ignored folder among them), a
  // FIFO, a FIFO `.gitignore` in a new folder, and a setuid file.
  write_file(w / "n/m/k.txt", "k\n");
  write_file(w / "debug.log", "ignored\n");
  write_file(w / ".gitignore", read_file(w / ".gitignore") + "cache/\n/conftest.py\n");
  write_file(w / "conftest.py", "ignored too\n");
  write_file(w / "cache/a/b.txt", "ignored folder\n");
  write_file(w / "cache/c.txt", "ignored folder\n");
  ASSERT_EQ(::mkfifo((w / "pipe").c_str(), 0644), 0);
  fs::create_directories(w / "sub");
  ASSERT_EQ(::mkfifo((w / "sub/.gitignore").c_str(), 0644), 0);
  write_file(w / "sub/kept.txt", "kept\n");
  write_file(w / "suid.sh", "echo suid\n");
  ASSERT_EQ(::chmod((w / "suid.sh").c_str(), 04755), 0);

  const CommitOutcome made = checkpoint_from_the_list(w, "iteration 2");
  EXPECT_EQ(made.kind, CommitOutcome::Kind::committed);
  expect_all_committed(w);
  EXPECT_EQ(run_git(w, "show HEAD:same-size.txt"), "AAAA\n");
  EXPECT_EQ(run_git(w, "show HEAD:renamed-over.txt"), "BBBB\n");
  EXPECT_EQ(run_git(w, "show HEAD:tracked.log"), "changed\n");
  const auto modes = head_modes(w);
  EXPECT_EQ(modes.at("run.sh"), "100755");
  EXPECT_EQ(modes.count("gone.txt"), 0u);
  EXPECT_EQ(modes.count("becomes-folder"), 0u);
  EXPECT_EQ(modes.at("becomes-folder/inner.txt"), "100644");
  EXPECT_EQ(modes.count("folder/x.txt"), 0u);
  EXPECT_EQ(modes.at("folder"), "100644");
  EXPECT_EQ(modes.at("becomes-link.txt"), "120000");
  EXPECT_EQ(modes.at("new-link"), "120000");
  EXPECT_EQ(modes.at("n/m/k.txt"), "100644");
  EXPECT_EQ(modes.at("sub/kept.txt"), "100644");
  EXPECT_EQ(modes.at("suid.sh"), "100755");
  for (const char* never :
       {"debug.log", "conftest.py", "cache/a/b.txt", "cache/c.txt", "pipe", "sub/.gitignore"})
    EXPECT_EQ(modes.count(never), 0u) << never;
  EXPECT_FALSE(fs::exists(fs::symlink_status(w / "pipe")));
  EXPECT_TRUE(fsck_clean(t.root()));

  // Nothing written since: nothing to commit, and still no walk of libgit2's own.
  EXPECT_EQ(checkpoint_from_the_list(w, "iteration 3").kind,
            CommitOutcome::Kind::nothing_to_commit);
  // The index keeps the trees written (its cache-tree extension), and they are the right ones:
  // one more change in one folder gives the tree git builds from the entries alone.
  const fs::path index_file = fs::path(git_line(w, "rev-parse --absolute-git-dir")) / "index";
  EXPECT_NE(read_file(index_file).find("TREE"), std::string::npos);
  write_file(w / "n/m/k.txt", "k2\n");
  checkpoint_from_the_list(w, "iteration 4");
  expect_all_committed(w);
  const std::string fresh = (w.parent_path() / "fresh-index").string();
  run_git(w, "ls-files -s | GIT_INDEX_FILE=" + fresh + " git update-index --index-info");
  EXPECT_EQ(run_command("GIT_INDEX_FILE=" + fresh + " git write-tree", w.string()).output,
            run_git(w, "rev-parse HEAD^{tree}"));
}

TEST(CheckpointWalkTest, AnEntryWhoseStatDataMatchButIsRacilyCleanIsHashedAgain) {
  TestRepo t;
  Worktree wt = integration_loop_worktree(t.open());
  const fs::path w = wt.path();
  // The file in the work tree says "new!", but its index entry holds the blob of "old!" with
  // every stat field of the file as it is now: only git's racy-clean rule (the entry is not
  // older than the index file) says the stat data prove nothing.
  write_file(w / "racy.txt", "new!\n");
  const struct timespec past = {1000000000, 0};
  set_mtime(w / "racy.txt", past);
  struct stat st {};
  ASSERT_EQ(::lstat((w / "racy.txt").c_str(), &st), 0);
  {
    git_repository* raw = nullptr;
    ASSERT_EQ(git_repository_open(&raw, w.c_str()), 0);
    git::detail::RepoPtr repo(raw);
    git_index* index_raw = nullptr;
    ASSERT_EQ(git_repository_index(&index_raw, repo.get()), 0);
    git::detail::IndexPtr index(index_raw);
    git_index_entry e{};
    e.ctime = {static_cast<std::int32_t>(st.st_ctim.tv_sec),
               static_cast<std::uint32_t>(st.st_ctim.tv_nsec)};
    e.mtime = {static_cast<std::int32_t>(st.st_mtim.tv_sec),
               static_cast<std::uint32_t>(st.st_mtim.tv_nsec)};
    e.dev = static_cast<std::uint32_t>(st.st_dev);
    e.ino = static_cast<std::uint32_t>(st.st_ino);
    e.mode = GIT_FILEMODE_BLOB;
    e.uid = st.st_uid;
    e.gid = st.st_gid;
    e.file_size = static_cast<std::uint32_t>(st.st_size);
    e.path = "racy.txt";
    ASSERT_EQ(git_blob_create_from_buffer(&e.id, repo.get(), "old!\n", 5), 0);
    ASSERT_EQ(git_index_add(index.get(), &e), 0);
    ASSERT_EQ(git_index_write(index.get()), 0);
  }
  // The index file written in the same instant as the file: racily clean.
  const fs::path index_file = fs::path(git_line(w, "rev-parse --absolute-git-dir")) / "index";
  set_mtime(index_file, past);

  checkpoint_from_the_list(w, "racy");
  expect_all_committed(w);
  EXPECT_EQ(run_git(w, "show HEAD:racy.txt"), "new!\n");
}

TEST(CheckpointWalkTest, ANestedRepositoryIsLeftToGitsOwnWalkUnlessItIsIgnored) {
  TestRepo t;
  Worktree wt = integration_loop_worktree(t.open());
  const fs::path w = wt.path();
  // Inside an ignored folder (say, a package a build cloned): the list stands in.
  write_file(w / "deps.log/readme", "x\n");
  run_git(w, "init -q ignored.log");
  write_file(w / "new.txt", "new\n");
  checkpoint_from_the_list(w, "ignored nested repository");
  expect_all_committed(w);
  // Where git would look into it: git's own walk decides, as before this change (libgit2 1.5
  // then refuses `inner/`, an unregistered submodule: the outcome is not this test's subject).
  run_git(w, "init -q inner");
  write_file(w / "inner/file.txt", "inner\n");
  const std::uint64_t git_walks = git::checkpoint_git_walks();
  (void)Worktree::checkpoint_at(w, "nested repository");
  EXPECT_EQ(git::checkpoint_git_walks(), git_walks + 1);
  EXPECT_EQ(head_modes(w).count("inner/file.txt"), 0u);
}
