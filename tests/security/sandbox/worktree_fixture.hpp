// The sandbox's start tests' common set-up (label `security`): a real repository in a temp dir
// with one loop worktree under .loopr/worktrees, and a sandbox config with a process limit.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <loopr/core/config.hpp>

#include "support/git_repo.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

class LoopWorktreeTest : public ::testing::Test {
 protected:
  explicit LoopWorktreeTest(const std::string& temp_name) : dir(temp_name) {}

  void SetUp() override {
    repo = std::filesystem::canonical(dir.path()) / "repo";
    write_file(repo / "README", "hello\n");
    auto init = git_init_with_loop_worktree(repo);
    ASSERT_EQ(init.exit_code, 0) << init.output;
    worktree = repo / ".loopr/worktrees/code-001";
    config.limits.processes = 64;
  }

  TempDir dir;
  std::filesystem::path repo, worktree;
  SandboxConfig config;
};

}  // namespace loopr::testing
