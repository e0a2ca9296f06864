// The one reader of a loop's artifact (git/artifact.hpp) against real repositories made by the
// test: the worktree first, then the loop's branch, its archive branch, its plan's integration
// branch; a symlink or FIFO the model left at the artifact's path is never read nor waited on.
#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <future>
#include <thread>

#include <loopr/core/file_read.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/git/artifact.hpp>
#include <loopr/git/loop_worktrees.hpp>

#include "git/git_test_repo.hpp"

using namespace loopr;
using namespace loopr::testing;
using loopr::git::ArtifactText;
using loopr::git::LoopWorktrees;
namespace fs = std::filesystem;

namespace {

const std::string kSecret = "SECRET-KEY-of-the-person";

// Spec loop 001-001 with its worktree made (from trunk, through its plan's integration branch).
Loop prepared_spec(const LoopWorktrees& wt) {
  Loop l;
  l.id = "001-001";
  l.type = LoopType::spec;
  l.plan_id = "001";
  l.parent_id = "001";
  l.output_artifacts = {artifact_path(LoopType::spec, l.id, "thing")};
  auto made = wt.prepare(l, "trunk");
  EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().message);
  if (made.ok()) {
    l.worktree = made->worktree;
    l.branch = made->branch;
  }
  return l;
}

// `rel` committed with `content` on `branch` (made from trunk when missing) through the main
// checkout, which is back on trunk afterwards.
void commit_on(const TestRepo& repo, const std::string& branch, const std::string& rel,
               const std::string& content) {
  const bool exists =
      run_command("git rev-parse -q --verify refs/heads/" + branch, repo.root().string())
          .exit_code == 0;
  run_git(repo.root(), exists ? "checkout -q " + branch : "checkout -q -b " + branch + " trunk");
  repo.write(rel, content);
  repo.commit_all("on " + branch);
  run_git(repo.root(), "checkout -q trunk");
}

// Spec loop 001-001's worktree in a test repository, and the file its artifact is written to.
class ArtifactReaderTest : public ::testing::Test {
 protected:
  TestRepo repo;
  LoopWorktrees wt{repo.root()};
  Loop spec = prepared_spec(wt);
  const fs::path file = fs::path(spec.worktree) / spec.output_artifacts.front();

  /// The artifact written with `content` and committed on the loop's branch.
  void commit_artifact(const std::string& content) {
    write_file(file, content);
    repo.commit_all("spec", fs::path(spec.worktree));
  }
};

git::ArtifactPlace place_of(const TestRepo& repo, const Loop& l) {
  return {repo.root(), l.worktree, l.output_artifacts.front(), git::artifact_branches(l)};
}

// A file outside the repository that holds a secret (the person's key).
fs::path secret_file(const TestRepo& repo) {
  fs::path p = repo.dir().path() / "home/.ssh/id_rsa";
  write_file(p, kSecret + "\n");
  return p;
}

// `read` on another thread: its answer, or nullopt when it did not return within 20 s (it waits
// on a FIFO); then the FIFO at `fifo` is opened for writing so the reader ends.
template <typename T, typename F>
std::optional<T> unless_blocked(F read, const fs::path& fifo) {
  std::packaged_task<T()> task(std::move(read));
  auto answer = task.get_future();
  std::thread t(std::move(task));
  const bool returned = answer.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  if (!returned) ::close(::open(fifo.c_str(), O_WRONLY | O_NONBLOCK));  // lets it end
  t.join();
  if (!returned) return std::nullopt;
  return answer.get();
}

}  // namespace

TEST_F(ArtifactReaderTest,
       TheWorktreeFirstThenTheLoopsBranchItsArchiveAndItsPlansIntegrationBranch) {
  const std::string rel = spec.output_artifacts.front();
  EXPECT_EQ(git::artifact_branches(spec),
            (std::vector<std::string>{spec.branch, "loopr/archive/001-001", "loopr/001"}));
  commit_artifact("# on the loop's branch\n");
  commit_on(repo, "loopr/archive/001-001", rel, "# archived\n");
  commit_on(repo, "loopr/001", rel, "# on the integration branch\n");
  write_file(fs::path(spec.worktree) / rel, "# in the worktree\n");

  git::ArtifactPlace where = place_of(repo, spec);
  ArtifactText read = git::read_loop_artifact(where, 1000);
  EXPECT_EQ(read.bytes, "# in the worktree\n");
  EXPECT_EQ(read.branch, "");
  where.worktree.clear();  // retired
  read = git::read_loop_artifact(where, 1000);
  EXPECT_EQ(read.bytes, "# on the loop's branch\n");
  EXPECT_EQ(read.branch, spec.branch);
  where.branches = git::artifact_branches("loopr/001-loops/gone", spec.id, spec.plan_id);
  EXPECT_EQ(git::read_loop_artifact(where, 1000).bytes, "# archived\n");
  run_git(repo.root(), "branch -q -D loopr/archive/001-001");
  read = git::read_loop_artifact(where, 1000);
  EXPECT_EQ(read.bytes, "# on the integration branch\n");
  EXPECT_EQ(read.branch, "loopr/001");
  where.branches = {"loopr/001-loops/gone"};
  read = git::read_loop_artifact(where, 1000);
  EXPECT_FALSE(read.bytes);
  EXPECT_NE(read.problem.find("its worktree and branches do not hold it"), std::string::npos)
      << read.problem;
  where.rel = "../" + rel;
  EXPECT_FALSE(git::read_loop_artifact(where, 1000).bytes) << "a path out of the repository";
}

// proves S1.12
TEST_F(ArtifactReaderTest, ASymlinkAtTheArtifactOrAFolderOnTheWayIsNeverFollowed) {
  const std::string rel = spec.output_artifacts.front();
  commit_artifact("# committed\n");
  const fs::path secret = secret_file(repo);

  // The artifact a symlink to the person's key: the one reader, the manager's read (the children
  // it spawns, the approved plan) and a worktree-only read (the engine's) never read it.
  fs::remove(file);
  fs::create_symlink(secret, file);
  ArtifactText read = git::read_loop_artifact(place_of(repo, spec), 1000);
  EXPECT_EQ(read.bytes, "# committed\n") << "read as committed instead";
  EXPECT_NE(read.worktree_problem.find("symbolic link"), std::string::npos)
      << read.worktree_problem;
  auto managers = wt.read_artifact(spec, 1000);
  ASSERT_TRUE(managers.ok()) << managers.error().message;
  EXPECT_EQ(*managers, "# committed\n");
  ArtifactText engines = git::read_loop_artifact({{}, spec.worktree, rel, {}}, 1000);
  EXPECT_FALSE(engines.bytes);
  EXPECT_EQ(engines.problem.find(kSecret), std::string::npos);

  // A symlink to another file inside the worktree is not followed either (none is needed: the
  // merge policy holds every symlink for the person anyway).
  write_file(fs::path(spec.worktree) / "inside.md", "# inside\n");
  fs::remove(file);
  fs::create_symlink(fs::path(spec.worktree) / "inside.md", file);
  EXPECT_EQ(git::read_loop_artifact(place_of(repo, spec), 1000).bytes, "# committed\n");

  // A folder on the way made a symlink to a folder outside that holds a file of that name.
  const fs::path folder = file.parent_path();
  const fs::path outside = repo.dir().path() / "outside";
  write_file(outside / file.filename(), kSecret + "\n");
  fs::remove_all(folder);
  fs::create_symlink(outside, folder);
  read = git::read_loop_artifact(place_of(repo, spec), 1000);
  EXPECT_EQ(read.bytes, "# committed\n");
  EXPECT_NE(read.worktree_problem.find("not followed"), std::string::npos) << read.worktree_problem;
  managers = wt.read_artifact(spec, 1000);
  ASSERT_TRUE(managers.ok()) << managers.error().message;
  EXPECT_EQ(*managers, "# committed\n");
}

// proves S1.12
TEST_F(ArtifactReaderTest, AFifoAtTheArtifactsPathIsNeitherReadNorWaitedOn) {
  commit_artifact("# committed\n");
  fs::remove(file);
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);

  auto managers =
      unless_blocked<Result<std::string>>([&] { return wt.read_artifact(spec, 1000); }, file);
  ASSERT_TRUE(managers) << "the manager's read waited on the FIFO";
  ASSERT_TRUE(managers->ok()) << managers->error().message;
  EXPECT_EQ(**managers, "# committed\n");
  auto engines = unless_blocked<ArtifactText>(
      [&] {
        return git::read_loop_artifact({{}, spec.worktree, spec.output_artifacts.front(), {}},
                                       1000);
      },
      file);
  ASSERT_TRUE(engines) << "the worktree read waited on the FIFO";
  EXPECT_FALSE(engines->bytes);
  EXPECT_NE(engines->worktree_problem.find("not a regular file"), std::string::npos)
      << engines->worktree_problem;
}

TEST_F(ArtifactReaderTest, OverTheCapItIsCutAndSaysSo) {
  commit_artifact("0123456789");
  git::ArtifactPlace where = place_of(repo, spec);
  ArtifactText read = git::read_loop_artifact(where, 4);
  EXPECT_EQ(read.bytes, "0123");
  EXPECT_TRUE(read.truncated);
  read = git::read_loop_artifact(where, 10);
  EXPECT_EQ(read.bytes, "0123456789");
  EXPECT_FALSE(read.truncated) << "exactly the cap is not cut";
  where.worktree.clear();
  read = git::read_loop_artifact(where, 4);
  EXPECT_EQ(read.bytes, "0123");
  EXPECT_TRUE(read.truncated);
  EXPECT_EQ(read.branch, spec.branch);
  EXPECT_EQ(wt.read_artifact(spec, 4)->size(), 5u) << "the manager's: max_bytes + 1";
}
