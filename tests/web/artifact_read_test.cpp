// The web page reads a loop's artifact through the one reader (git/artifact.hpp): the worktree's
// file while the loop has one, else as committed; a symlink to a secret or a FIFO the model left
// in the worktree is never read nor waited on; a page holds at most 1 MiB, as valid UTF-8.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

#include <loopr/daemon/loop_files.hpp>

#include "support/git_repo.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using loopr::daemon::read_artifact;
using ShownFile = loopr::api::FileView;
using namespace loopr::testing;
namespace fs = std::filesystem;

namespace {

const std::string kSecret = "SECRET-KEY-of-the-person";
const std::string kRel = ".loopr/specs/001-001-thing.spec.md";

// A repository whose loop 001-001 has its worktree (branch `loop`) with its artifact committed.
struct ArtifactRepo {
  TempDir dir{"loopr-web-artifact"};
  TempDir home{"loopr-home"};
  api::LoopRow row;
  std::string worktree;
  fs::path file;

  ArtifactRepo() {
    write_file(dir / "README", "a project\n");
    auto made = git_init_with_loop_worktree(dir.path());
    EXPECT_EQ(made.exit_code, 0) << made.output;
    row.id = "001-001";
    row.type = LoopType::spec;
    row.plan_id = "001";
    row.branch = "loop";
    worktree = (dir / ".loopr/worktrees/code-001").string();
    row.worktree = worktree;
    file = fs::path(row.worktree) / kRel;
    write_file(file, "# committed\n");
    auto committed = run_command("git add -A && git commit -q -m spec", row.worktree);
    EXPECT_EQ(committed.exit_code, 0) << committed.output;
    write_file(home / ".ssh/id_rsa", kSecret + "\n");
  }

  // The page's read on another thread; nullopt when it waited on a FIFO at the artifact's path
  // for 20 s (then the FIFO is opened for writing so that it ends).
  std::optional<ShownFile> read() const {
    std::packaged_task<ShownFile()> task(
        [this] { return read_artifact(RepoPaths(dir.path()), row, kRel); });
    auto answer = task.get_future();
    std::thread t(std::move(task));
    const bool returned = answer.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
    if (!returned) ::close(::open(file.c_str(), O_WRONLY | O_NONBLOCK));
    t.join();
    if (!returned) return std::nullopt;
    return answer.get();
  }
};

}  // namespace

TEST(WebArtifactTest, TheWorktreesFileThenTheCommittedOneAtMostAPageAsValidUtf8) {
  ArtifactRepo r;
  write_file(r.file, "# in the worktree \xff\n");
  auto f = r.read();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->text, "# in the worktree \xEF\xBF\xBD\n");
  EXPECT_EQ(f->source, "");
  r.row.worktree.clear();
  f = r.read();
  EXPECT_EQ(f->text, "# committed\n");
  EXPECT_EQ(f->source, "loop");
  r.row.worktree = r.worktree;
  write_file(r.file, std::string((1 << 20) + 10, 'x'));
  f = r.read();
  EXPECT_EQ(f->text->size(), std::size_t{1} << 20);
  EXPECT_TRUE(f->truncated);
}

// proves S1.12
TEST(WebArtifactTest, ASymlinkToASecretOrAFifoInTheWorktreeIsNeverReadNorWaitedOn) {
  ArtifactRepo r;
  fs::remove(r.file);
  fs::create_symlink(r.home / ".ssh/id_rsa", r.file);
  auto f = r.read();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->text, "# committed\n");
  EXPECT_EQ(f->source, "loop");

  // The artifact's folder a symlink to a folder outside holding a file of the artifact's name.
  write_file(r.home / "specs" / r.file.filename(), kSecret + "\n");
  fs::remove_all(r.file.parent_path());
  fs::create_symlink(r.home / "specs", r.file.parent_path());
  f = r.read();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->text, "# committed\n");

  fs::remove(r.file.parent_path());
  fs::create_directories(r.file.parent_path());
  ASSERT_EQ(::mkfifo(r.file.c_str(), 0600), 0);
  f = r.read();
  ASSERT_TRUE(f) << "the page's read waited on the FIFO";
  EXPECT_EQ(f->text, "# committed\n");
}
