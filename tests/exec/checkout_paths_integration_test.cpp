// The checkout's dependencies in a loop's worktree (issue 27), with the real bwrap and a
// worktree made by git: `sandbox.read_only: [node_modules, .venv, …]` shows the checkout's
// untracked folders and files read-only at the same place in the worktree (and at their own
// place), `sandbox.env` values are set with `$WORKTREE` expanded, git is told never to commit the
// mount points, a worktree's own (tracked) copy is never covered; `sandbox: none` links instead.
#include <gtest/gtest.h>

#include <loopr/exec/executor.hpp>

#include "support/command_env.hpp"
#include "support/sandbox_fixture.hpp"
#include "support/subprocess.hpp"

using namespace loopr;
using namespace loopr::exec;
using namespace loopr::testing;
using namespace std::chrono_literals;

namespace {

class CheckoutPathsTest : public RepoWithLoopWorktreeTest {
 protected:
  CheckoutPathsTest()
      : RepoWithLoopWorktreeTest("loopr-checkout-paths",
                                 {{"README", "hello\n"},
                                  {"vendor/lib.txt", "tracked vendor\n"},
                                  {".gitignore", "/node_modules/\n/.venv/\n/local.env\n"}}) {}
  std::unique_ptr<Executor> executor;

  void SetUp() override {
    RepoWithLoopWorktreeTest::SetUp();
    if (HasFatalFailure()) return;
    // What the user installed in the checkout, not in git.
    write_file(repo / "node_modules/lib/index.js", "module.exports = 42;\n");
    write_file(repo / ".venv/pyvenv.cfg", "home = /usr/bin\n");
    write_file(repo / "local.env", "TOKEN=from-checkout\n");
    write_file(repo / "vendor/untracked.txt", "only in the checkout\n");
    config.read_only = {"node_modules", ".venv", "local.env", "vendor"};
    config.env_values = {{"PYTHONPATH", "$WORKTREE/src"},
                         {"LOOPR_TEST_PATH", "$WORKTREE/.venv/bin:$PATH"}};
  }

  void build() {
    ExecutorOptions o{RepoPaths(repo)};
    o.env = loopr::testing::path_and_home_env("/nonexistent-home");
    executor = make_executor(config, o);
  }

  ProcessResult sh(const std::string& command) {
    return run_shell(*executor, worktree, command, 20s);
  }

  fs::path admin() const { return repo / ".git/worktrees/code-001"; }
};

}  // namespace

TEST_F(CheckoutPathsTest, TheCheckoutsDependenciesShowReadOnlyInTheWorktree) {
  build();
  auto r =
      sh("cat node_modules/lib/index.js .venv/pyvenv.cfg local.env; echo \"pp=$PYTHONPATH\"; "
         "echo \"path=$LOOPR_TEST_PATH\"; "
         "(echo x > node_modules/new.js) 2>/dev/null || echo node_modules-read-only; "
         "(echo x > local.env) 2>/dev/null || echo file-read-only; "
         "cat " +
         (repo / ".venv/pyvenv.cfg").string() + "; ls vendor; cat " + (repo / "README").string() +
         " 2>/dev/null || echo checkout-hidden");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("module.exports = 42;"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("home = /usr/bin\nTOKEN=from-checkout"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("pp=" + worktree.string() + "/src\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("path=" + worktree.string() + "/.venv/bin:/usr/local/bin:/usr/bin:/bin"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("node_modules-read-only"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("file-read-only"), std::string::npos) << r.output;
  // At its own place too (a venv's console scripts name it in their shebang line).
  EXPECT_NE(r.output.find("home = /usr/bin\nlib.txt\n"), std::string::npos) << r.output;
  // The worktree's own vendor/ (tracked) is kept: the checkout's untracked file is not in it.
  EXPECT_EQ(r.output.find("untracked.txt"), std::string::npos) << r.output;
  // The rest of the checkout stays hidden.
  EXPECT_NE(r.output.find("checkout-hidden"), std::string::npos) << r.output;
  // Nothing reached the checkout; the worktree keeps only empty mount points, which git is told
  // never to commit.
  EXPECT_FALSE(fs::exists(repo / "node_modules/new.js"));
  EXPECT_EQ(read_file(repo / "local.env"), "TOKEN=from-checkout\n");
  EXPECT_TRUE(fs::is_empty(worktree / "node_modules"));
  EXPECT_EQ(read_file(admin() / kWorktreeMountsFile), "node_modules\n.venv\nlocal.env\nvendor\n");
}

TEST_F(CheckoutPathsTest, WithoutASandboxTheyAreLinks) {
  config.mode = "none";
  build();
  auto r = sh("cat node_modules/lib/index.js local.env; echo \"pp=$PYTHONPATH\"; ls vendor");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("module.exports = 42;\nTOKEN=from-checkout"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("pp=" + worktree.string() + "/src"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("untracked.txt"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_symlink(worktree / "node_modules"));
  EXPECT_EQ(fs::read_symlink(worktree / "node_modules"), repo / "node_modules");
  EXPECT_FALSE(fs::is_symlink(worktree / "vendor"));
  EXPECT_EQ(read_file(admin() / kWorktreeMountsFile), "node_modules\n.venv\nlocal.env\nvendor\n");
}
