#include "support/git_repo.hpp"

namespace loopr::testing {

namespace {

constexpr const char* kInitCommitAll =
    "git init -q -b main . && git config user.name test && git config user.email t@t && "
    "git add -A && git commit -q -m init";

}  // namespace

CommandOutput git_init_commit_all(const std::filesystem::path& dir) {
  return run_command(kInitCommitAll, dir.string());
}

CommandOutput git_init_with_loop_worktree(const std::filesystem::path& dir) {
  return run_command(
      std::string(kInitCommitAll) + " && git worktree add -q .loopr/worktrees/code-001 -b loop",
      dir.string());
}

}  // namespace loopr::testing
