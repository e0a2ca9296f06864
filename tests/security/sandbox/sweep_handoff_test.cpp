// One walk of the worktree per command and checkpoint (issue 47 item 3): the sweep after a
// command hands its listing to the checkpoint that follows only when nothing the command
// started can still write there (a bubblewrap sandbox that ended by itself). Real bwrap, real
// git worktrees, real leftover processes; what the checkpoint committed is read with the git CLI.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <future>

#include <loopr/core/clean_checkpoint.hpp>
#include <loopr/core/sweep_handoff.hpp>
#include <loopr/exec/executor.hpp>
#include <loopr/git/clean_changes.hpp>
#include <loopr/git/work_tree_state.hpp>
#include <loopr/git/worktree.hpp>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "worktree_fixture.hpp"

using namespace loopr;
using namespace loopr::exec;
using namespace loopr::testing;
using namespace std::chrono_literals;

namespace {

class SweepHandoffTest : public LoopWorktreeTest {
 protected:
  SweepHandoffTest() : LoopWorktreeTest("loopr-handoff") {}
  std::unique_ptr<Executor> executor;

  void SetUp() override {
    LoopWorktreeTest::SetUp();
    for (int i = 0; i < 20; ++i)
      write_file(worktree / "src" / ("f" + std::to_string(i) + ".c"), "x\n");
    auto add = run_command("git add -A && git commit -q -m files", worktree.string());
    ASSERT_EQ(add.exit_code, 0) << add.output;
  }

  void build(const std::string& mode) {
    config.mode = mode;
    ExecutorOptions o{RepoPaths(repo)};
    o.env = [](const char* name) -> std::optional<std::string> {
      if (std::string(name) == "PATH") return std::string("/usr/local/bin:/usr/bin:/bin");
      return std::nullopt;
    };
    executor = make_executor(config, o);
  }

  ProcessResult sh(const std::string& command, bool hand_over,
                   std::chrono::milliseconds timeout = 30s) {
    Command c = Command::shell(command, worktree);
    c.timeout = timeout;
    c.hand_over_sweep = hand_over;
    return executor->run(c);
  }

  // The checkpoint an iteration makes after its validation command, on a thread: should a FIFO
  // reach libgit2 it blocks, and the test opens the FIFO's other end to say so and go on.
  Result<git::CommitOutcome> checkpoint_after_command() {
    auto made = std::async(std::launch::async, [this] {
      return git::Worktree::checkpoint_at(worktree, "checkpoint", /*after_command=*/true);
    });
    if (made.wait_for(60s) == std::future_status::ready) return made.get();
    for (const auto& e : fs::recursive_directory_iterator(worktree))
      if (e.is_fifo()) ::close(::open(e.path().c_str(), O_WRONLY | O_NONBLOCK));
    made.wait();
    ADD_FAILURE() << "the checkpoint blocked on a FIFO";
    return make_error(ErrorCode::io, "blocked");
  }

  std::string committed() {
    return run_command("git show --stat --format= HEAD", worktree.string()).output;
  }

  std::string specials() {
    return run_command(
               "find . -path ./.git -prune -o \\( -type p -o -type s -o -perm -4000 -o "
               "-perm -2000 \\) -print",
               worktree.string())
        .output;
  }
};

}  // namespace

// The walk count: a sandboxed command that ended by itself, then the checkpoint after it, walk
// the worktree once between them (twice before issue 47 item 3), and the commit still holds
// exactly what the command changed (added, modified, deleted).
TEST_F(SweepHandoffTest, ACheckpointAfterASandboxedCommandWalksTheWorktreeOnce) {
  build("bubblewrap");
  const std::uint64_t sweeps = worktree_sweeps();
  const std::uint64_t git_walks = git::checkpoint_git_walks();
  auto r = sh("echo new > src/new.c && echo changed > src/f1.c && rm src/f2.c && exit 1", true);
  ASSERT_FALSE(r.spawn_failed) << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(handed_sweeps(), 1u) << "the sweep after the command kept no listing";
  auto made = checkpoint_after_command();
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(made->kind, git::CommitOutcome::Kind::committed);
  EXPECT_EQ(worktree_sweeps(), sweeps + 1) << "the checkpoint walked the worktree again";
  EXPECT_EQ(git::checkpoint_git_walks(), git_walks);
  EXPECT_EQ(handed_sweeps(), 0u);
  const std::string stat = committed();
  for (const char* path : {"src/new.c", "src/f1.c", "src/f2.c"})
    EXPECT_NE(stat.find(path), std::string::npos) << path << "\n" << stat;
  EXPECT_EQ(run_command("git status --porcelain", worktree.string()).output, "");
  // The worktree is that commit's now, for the next protection check (until a command runs).
  EXPECT_EQ(clean_checkpoints(), 1u);
  sh("true", false);
  EXPECT_EQ(clean_checkpoints(), 0u) << "a later command left the clean state in place";
}

// A sandboxed command that leaves a process making FIFOs behind: the sandbox's PID namespace
// ends it with the command, so the listing handed over stays true; nothing appears after the
// sweep, and the checkpoint neither blocks nor commits a special file.
// proves S1.24
TEST_F(SweepHandoffTest, ASandboxedCommandsBackgroundProcessDiesBeforeTheHandover) {
  build("bubblewrap");
  auto r =
      sh("(setsid sh -c 'i=0; while :; do i=$((i+1)); mkfifo late$i; mkfifo .gitignore; "
         "done' >/dev/null 2>&1 &) ; until [ -p late3 ]; do :; done; echo left-behind",
         true);
  ASSERT_FALSE(r.spawn_failed) << r.output;
  ASSERT_NE(r.output.find("left-behind"), std::string::npos) << r.output;
  ASSERT_NE(r.output.find("(a FIFO)"), std::string::npos)
      << "the trick was not tried: " << r.output;
  EXPECT_EQ(handed_sweeps(), 1u);
  // Were it alive, the loop would make a FIFO within microseconds: look for one a while.
  EXPECT_FALSE(wait_until([&] { return !specials().empty(); }, 500ms)) << specials();
  const std::uint64_t sweeps = worktree_sweeps();
  auto made = checkpoint_after_command();
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(worktree_sweeps(), sweeps) << "the handed-over listing was not used";
  EXPECT_EQ(specials(), "");
  EXPECT_EQ(committed().find("late"), std::string::npos) << committed();
}

// Unconfined (`sandbox: none`), a process that left the command's process group lives on, and
// makes a FIFO `.gitignore` (libgit2 reads it) and a setuid file after the command returned: no
// listing is handed over, the checkpoint sweeps again, removes the FIFO, clears the bit and
// does not block; and the protection check after it walks the worktree again.
// proves S1.24, S1.25
TEST_F(SweepHandoffTest, AnUnconfinedCommandsLeftoverProcessIsSweptByTheCheckpoint) {
  build("none");
  auto r =
      sh("setsid sh -c 'touch escaped; until [ -e go ]; do sleep 0.01; done; "
         "mkfifo .gitignore; mkfifo src/pipe; cp /bin/true s; chmod 4755 s; touch made' "
         ">/dev/null 2>&1 & until [ -e escaped ]; do sleep 0.01; done; echo started",
         true);
  ASSERT_NE(r.output.find("started"), std::string::npos) << r.output;
  EXPECT_EQ(handed_sweeps(), 0u) << "an unconfined command's sweep was handed over";
  write_file(worktree / "go", "");
  ASSERT_TRUE(wait_until([&] { return fs::exists(worktree / "made"); }, 20s))
      << "the leftover process did not run:\n"
      << specials();
  ASSERT_NE(specials(), "") << "the trick was not tried";
  const std::uint64_t sweeps = worktree_sweeps();
  const std::string before = run_command("git rev-parse HEAD", worktree.string()).output;
  auto made = checkpoint_after_command();
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(worktree_sweeps(), sweeps + 1) << "the checkpoint did not sweep";
  EXPECT_EQ(specials(), "");
  // The leftover process may write on: the next protection check walks the worktree.
  EXPECT_EQ(clean_checkpoints(), 0u) << "an unconfined command's checkpoint was called clean";
  const std::uint64_t fast = git::changes_read_from_checkpoint();
  const git::WrittenSince since{made->sha, {}};
  auto changes =
      git::path_changes_after(*git::Worktree::open(worktree), before.substr(0, 40), {}, since);
  ASSERT_TRUE(changes) << changes.error().message;
  EXPECT_EQ(git::changes_read_from_checkpoint(), fast);
  struct stat st {};
  ASSERT_EQ(::lstat((worktree / "s").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0u);
  EXPECT_EQ(committed().find(".gitignore"), std::string::npos) << committed();
}

// A command killed at its time limit ends its sandbox by a signal, asynchronously: not handed
// over. Nor is the listing of a command whose caller did not ask, and a later command in the
// worktree drops what an earlier one handed over (it may have written anything).
// proves S1.24
TEST_F(SweepHandoffTest, OnlyTheLastCommandThatEndedByItselfHandsOver) {
  build("bubblewrap");
  auto slow = sh("sleep 30", true, 1s);
  EXPECT_TRUE(slow.timed_out) << slow.output;
  EXPECT_EQ(handed_sweeps(), 0u) << "a timed-out command's sweep was handed over";
  sh("true", false);
  EXPECT_EQ(handed_sweeps(), 0u) << "kept without being asked";
  sh("true", true);
  EXPECT_EQ(handed_sweeps(), 1u);
  sh("echo late > late.txt", false);
  EXPECT_EQ(handed_sweeps(), 0u) << "a later command left the earlier listing in place";
  const std::uint64_t sweeps = worktree_sweeps();
  auto made = checkpoint_after_command();
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(worktree_sweeps(), sweeps + 1);
  EXPECT_NE(committed().find("late.txt"), std::string::npos) << committed();
}

// A checkpoint that is not right after the command (a rebase's, one from written paths) takes
// the listing and drops it: never used later, never kept.
// proves S1.24
TEST_F(SweepHandoffTest, AnyOtherCheckpointDropsTheListing) {
  build("bubblewrap");
  sh("true", true);
  ASSERT_EQ(handed_sweeps(), 1u);
  write_file(worktree / "by-hand.txt", "x\n");
  const std::uint64_t sweeps = worktree_sweeps();
  auto made = git::Worktree::checkpoint_at(worktree, "checkpoint");
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(worktree_sweeps(), sweeps + 1);
  EXPECT_EQ(handed_sweeps(), 0u);
  EXPECT_NE(committed().find("by-hand.txt"), std::string::npos) << committed();
}
