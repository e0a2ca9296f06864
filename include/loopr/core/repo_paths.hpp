// Where loopr keeps things inside a repository (`.loopr/…`), in one place.
#pragma once

#include <filesystem>
#include <string>

#include <loopr/core/loop.hpp>

namespace loopr {

struct RepoPaths {
  std::filesystem::path root;  ///< the repository's work tree

  explicit RepoPaths(std::filesystem::path repo_root) : root(std::move(repo_root)) {}

  std::filesystem::path dot_loopr() const { return root / ".loopr"; }
  std::filesystem::path config_file() const { return dot_loopr() / "config.yml"; }
  std::filesystem::path state_dir() const { return dot_loopr() / "state"; }
  std::filesystem::path run_dir() const { return dot_loopr() / "run"; }
  std::filesystem::path socket() const { return run_dir() / "loopr.sock"; }
  std::filesystem::path pid_file() const { return run_dir() / "loopr.pid"; }
  std::filesystem::path worktrees_dir() const { return dot_loopr() / "worktrees"; }
  std::filesystem::path worktree(const std::string& loop_id) const {
    return worktrees_dir() / loop_id;
  }
  std::filesystem::path archive_dir() const { return dot_loopr() / "archive"; }
  std::filesystem::path logs_dir() const { return dot_loopr() / "logs"; }
  std::filesystem::path prompts_dir() const { return dot_loopr() / "prompts"; }
  std::filesystem::path loop_log_dir(const std::string& loop_id) const {
    return logs_dir() / "loops" / loop_id;
  }
  /// `.loopr/logs/loops/<id>/iterations/NNN/` (NNN zero-padded to 3): iteration `n`'s prompt,
  /// conversation and validation log.
  std::filesystem::path iteration_dir(const std::string& loop_id, int n) const;
};

/// Repo-relative artifact path for a loop: `.loopr/plans/001-add-oauth.plan.md`,
/// `.loopr/specs/001-002-db-schema.spec.md`, `.loopr/phases/001-002-003-x.phase.md`.
/// Code loops have no artifact (empty string).
std::string artifact_path(LoopType type, const std::string& loop_id, const std::string& title);

/// The directories loopr keeps out of git (`loopr init` adds them to .gitignore).
inline constexpr const char* kIgnoredDirs[] = {".loopr/state/", ".loopr/run/", ".loopr/worktrees/",
                                               ".loopr/archive/", ".loopr/logs/"};

/// In a worktree's git admin folder (`.git/worktrees/<id>/`): the checkout paths the executor
/// shows inside that worktree (`sandbox.read_only`'s relative entries, one per line). Their mount
/// points (or, with `sandbox: none`, links) are never committed from it.
inline constexpr const char* kWorktreeMountsFile = "loopr-mounts";

}  // namespace loopr
