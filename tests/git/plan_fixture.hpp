// A plan in a test repository: integration branch `loopr/001` made from `trunk`, and loops with
// their own worktrees on branches made from it — the shape the engine builds.
#pragma once

#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>

#include "git/git_test_repo.hpp"

namespace loopr::testing {

class PlanFixture : public ::testing::Test {
 protected:
  PlanFixture() : repo_(t_.open()) {
    EXPECT_TRUE(repo_.create_branch(integration(), "trunk").ok());
  }

  static std::string integration() { return git::integration_branch("001"); }
  static std::string branch_of(const std::string& loop_id) {
    return git::loop_branch("001", loop_id);
  }

  /// A new loop: its branch from the integration tip, its worktree checked out.
  git::Worktree loop(const std::string& loop_id) {
    auto created = repo_.create_branch(branch_of(loop_id), integration());
    EXPECT_TRUE(created.ok()) << (created.ok() ? "" : created.error().message);
    auto wt = repo_.add_worktree(loop_id, branch_of(loop_id));
    EXPECT_TRUE(wt.ok()) << (wt.ok() ? "" : wt.error().message);
    return std::move(wt).value();
  }

  /// Writes files in a worktree and checkpoints them; returns the new sha.
  std::string commit(const git::Worktree& wt,
                     const std::vector<std::pair<std::string, std::string>>& files,
                     const std::string& message) {
    for (const auto& [rel, content] : files) write_file(wt.path() / rel, content);
    auto c = wt.checkpoint(message);
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
    return c.ok() ? c->sha : std::string();
  }

  /// Deletes a file in a worktree and checkpoints.
  std::string remove(const git::Worktree& wt, const std::string& rel, const std::string& message) {
    std::filesystem::remove(wt.path() / rel);
    auto c = wt.checkpoint(message);
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
    return c.ok() ? c->sha : std::string();
  }

  /// Merges a loop's branch into the integration branch (the loop is done).
  void land(const std::string& loop_id) {
    auto m = repo_.merge(branch_of(loop_id), integration());
    ASSERT_TRUE(m.ok()) << m.error().message;
    ASSERT_TRUE(m->kind == git::MergeOutcome::Kind::fast_forward ||
                m->kind == git::MergeOutcome::Kind::merged)
        << git::to_string(m->kind);
  }

  std::string sha(const std::string& rev) { return git_line(t_.root(), "rev-parse " + rev); }

  TestRepo t_;
  git::Repository repo_;
};

/// A few bytes no text merge would treat as text.
inline std::string binary_blob(char seed) {
  std::string s("\x89PNG\r\n\x1a\n", 8);
  for (int i = 0; i < 256; ++i) s += static_cast<char>((i * 7 + seed) & 0xff);
  s += std::string(4, '\0');
  return s;
}

}  // namespace loopr::testing
