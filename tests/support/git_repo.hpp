// A user's repository made by the git CLI for a test: `git init` on `main` with a local committer
// and everything already in the folder committed, optionally with one loop worktree as the daemon
// lays them out. The caller checks the result (ASSERT_EQ(r.exit_code, 0) << r.output, or throws).
#pragma once

#include <filesystem>

#include "support/subprocess.hpp"

namespace loopr::testing {

/// `git init -q -b main` in `dir` (committer `test <t@t>`), then `git add -A` and a commit "init".
CommandOutput git_init_commit_all(const std::filesystem::path& dir);

/// git_init_commit_all, then a loop worktree at `.loopr/worktrees/code-001` on a new branch `loop`.
CommandOutput git_init_with_loop_worktree(const std::filesystem::path& dir);

}  // namespace loopr::testing
