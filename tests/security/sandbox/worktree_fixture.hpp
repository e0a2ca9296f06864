// The sandbox security tests' common set-up (label `security`): the shared repository with one
// loop worktree (support/sandbox_fixture.hpp), and a sandbox config with a process limit.
#pragma once

#include <string>

#include "support/sandbox_fixture.hpp"

namespace loopr::testing {

class LoopWorktreeTest : public RepoWithLoopWorktreeTest {
 protected:
  explicit LoopWorktreeTest(const std::string& temp_name) : RepoWithLoopWorktreeTest(temp_name) {
    config.limits.processes = 64;
  }
};

}  // namespace loopr::testing
