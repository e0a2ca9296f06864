// Test helpers for the git module: a real repository in a temp dir, built and inspected with the
// `git` CLI, so every check of loopr's libgit2 code is made by an independent implementation.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>
#include <loopr/git/worktree.hpp>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

/// Runs `git <args>` in `cwd`; a failing command fails the test (and returns its output).
inline std::string run_git(const std::filesystem::path& cwd, const std::string& args) {
  CommandOutput r = run_command("git " + args, cwd.string());
  EXPECT_EQ(r.exit_code, 0) << "git " << args << " in " << cwd << ":\n" << r.output;
  return r.output;
}

/// `git <args>` output without the trailing newline.
inline std::string git_line(const std::filesystem::path& cwd, const std::string& args) {
  std::string out = run_git(cwd, args);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

/// `git fsck` finds nothing wrong (dangling objects are fine: aborted rebases leave some).
inline ::testing::AssertionResult fsck_clean(const std::filesystem::path& root) {
  CommandOutput r = run_command("git fsck --strict --no-dangling --no-progress", root.string());
  if (r.exit_code == 0 && r.output.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "git fsck (exit " << r.exit_code << "):\n" << r.output;
}

/// Splits text into lines (no trailing empty line).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

/// A fresh non-bare repository with one commit on base branch `trunk` (deliberately neither
/// `main` nor `master`), a local identity, and `.gitignore` listing loopr's folders like
/// `loopr init` writes it.
class TestRepo {
 public:
  explicit TestRepo(const std::string& base_branch = "trunk") : dir_("loopr-git") {
    root_ = dir_.path() / "repo";
    std::filesystem::create_directories(root_);
    run_git(root_, "init -q -b " + base_branch);
    run_git(root_, "config user.name 'Test User'");
    run_git(root_, "config user.email test@example.com");
    write(".gitignore",
          ".loopr/state/\n.loopr/run/\n.loopr/worktrees/\n.loopr/archive/\n.loopr/logs/\n*.log\n");
    write("README.md", "# test repo\n");
    write("shared.txt", "line 1\nline 2\nline 3\n");
    commit_all("initial");
  }

  const std::filesystem::path& root() const { return root_; }
  const TempDir& dir() const { return dir_; }

  void write(const std::string& rel, const std::string& content) const {
    write_file(root_ / rel, content);
  }
  std::string read(const std::string& rel) const { return read_file(root_ / rel); }

  /// `git add -A && git commit` in `cwd` (default: the main work tree); returns the new sha.
  std::string commit_all(const std::string& message,
                         const std::optional<std::filesystem::path>& cwd = std::nullopt) const {
    std::filesystem::path where = cwd.value_or(root_);
    run_git(where, "add -A");
    run_git(where, "commit -q -m " + shell_quote(message));
    return git_line(where, "rev-parse HEAD");
  }

  git::Repository open() const {
    auto repo = git::Repository::open(root_);
    EXPECT_TRUE(repo.ok()) << (repo.ok() ? "" : repo.error().message);
    return std::move(repo).value();
  }

 private:
  TempDir dir_;
  std::filesystem::path root_;
};

/// A loop's worktree `code-1` on its own branch, made from plan 001's integration branch (itself
/// made from `trunk`) as the daemon does.
inline git::Worktree integration_loop_worktree(const git::Repository& repo) {
  EXPECT_TRUE(repo.create_branch(git::integration_branch("001"), "trunk").ok());
  EXPECT_TRUE(
      repo.create_branch(git::loop_branch("001", "code-1"), git::integration_branch("001")).ok());
  auto wt = repo.add_worktree("code-1", git::loop_branch("001", "code-1"));
  EXPECT_TRUE(wt.ok()) << (wt.ok() ? "" : wt.error().message);
  return std::move(wt).value();
}

/// Unwraps a Result in a test, failing with its message (not a crash) when it holds an error.
#define ASSERT_OK_AND_ASSIGN(decl, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL(LOOPR_CONCAT(test_result_, __LINE__), decl, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL(tmp, decl, expr)                                 \
  auto tmp = (expr);                                                               \
  ASSERT_TRUE(tmp.ok()) << #expr << ": " << (tmp.ok() ? "" : tmp.error().message); \
  decl = std::move(tmp).value()

#define ASSERT_OK(expr)                                                                    \
  do {                                                                                     \
    auto test_result_ok_ = (expr);                                                         \
    ASSERT_TRUE(test_result_ok_.ok()) << #expr << ": " << test_result_ok_.error().message; \
  } while (0)

}  // namespace loopr::testing
