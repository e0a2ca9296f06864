// Commands run through the real executor in a real repository (tests/exec, the sandbox security
// suites): a fixture with a user's repository made by git in a temp dir and one loop worktree as
// the daemon lays them out, and one shell command run through an executor.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/exec/executor.hpp>

#include "support/git_repo.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

namespace fs = std::filesystem;

/// `sh -c command` in `workdir` through `e`, stopped after `timeout`.
inline ProcessResult run_shell(exec::Executor& e, const fs::path& workdir,
                               const std::string& command,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  exec::Command c = exec::Command::shell(command, workdir);
  c.timeout = timeout;
  return e.run(c);
}

/// `repo` (in a temp dir named after `temp_name`) holds `committed` on `main`, and a loop
/// worktree at `worktree` (.loopr/worktrees/code-001, branch `loop`); `config` is the default
/// sandbox config for the test to change before it makes an executor.
class RepoWithLoopWorktreeTest : public ::testing::Test {
 protected:
  /// Files by their path in the repository, and their text.
  using Files = std::vector<std::pair<std::string, std::string>>;

  explicit RepoWithLoopWorktreeTest(const std::string& temp_name,
                                    Files committed = {{"README", "hello\n"}})
      : dir(temp_name), committed_(std::move(committed)) {}

  void SetUp() override {
    repo = fs::canonical(dir.path()) / "repo";
    for (const auto& [path, text] : committed_) write_file(repo / path, text);
    auto init = git_init_with_loop_worktree(repo);
    ASSERT_EQ(init.exit_code, 0) << init.output;
    worktree = repo / ".loopr/worktrees/code-001";
  }

  TempDir dir;
  fs::path repo, worktree;
  SandboxConfig config;

 private:
  Files committed_;
};

}  // namespace loopr::testing
