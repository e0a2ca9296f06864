// A loop's artifact (the plan, spec or phase it writes; a child's input, its parent's artifact),
// read by ONE reader for every part of loopr that reads one: the manager (the children it spawns,
// the approved plan), the engine (the prompt's input and purpose, the format check) and the web
// page. The model writes the worktree, so a symlink there may point at `~/.ssh/id_rsa` and a FIFO
// there would hang whoever opens it: the worktree's file is read only when it is a regular file
// reached without a symlink (core/file_read.hpp), never from outside the worktree; else the
// artifact is read as committed, from the branches in `artifact_branches`' order.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/loop.hpp>

namespace loopr::git {

/// Where a loop's artifact may be.
struct ArtifactPlace {
  std::filesystem::path repo;         ///< the repository's root (for its branches)
  std::string worktree;               ///< the loop's worktree; "" when it has none
  std::string rel;                    ///< the artifact's path in the worktree and the branches
  std::vector<std::string> branches;  ///< where it is committed, in order; none: worktree only
};

/// The branches a loop's artifact is committed on, in the order they are read: the loop's own
/// branch (the one its record names, else the name loopr gives it), its archive branch (a loop
/// archived or retried), its plan's integration branch (where every merged artifact of the tree
/// is).
std::vector<std::string> artifact_branches(const std::string& branch, const std::string& loop_id,
                                           const std::string& plan_id);
std::vector<std::string> artifact_branches(const Loop& loop);

/// What the format check reads of an artifact (the engine's and `loopr validate`'s): twice the
/// limit `artifacts.max_bytes` and a byte, enough to name an artifact too large without holding a
/// file of any size.
constexpr std::size_t format_check_bytes(std::size_t max_bytes) { return 2 * max_bytes + 1; }

/// A loop's artifact as read.
struct ArtifactText {
  std::optional<std::string> bytes;  ///< as written (not made UTF-8: the format check judges
                                     ///< that), at most the cap; nullopt: not found
  bool truncated = false;            ///< longer than the cap: `bytes` holds its first bytes
  std::string branch;                ///< the branch it was read from; "": the worktree
  std::string worktree_problem;      ///< why the worktree's file was not read, when it was not
  std::string problem;               ///< why there are no bytes
};

/// The artifact at `where`, at most `max_bytes`: the worktree's file when it is a regular file
/// reached without a symlink (a symlink, FIFO, socket or device there is never opened for
/// reading and never waited on), else the first branch of `where.branches` that holds it.
ArtifactText read_loop_artifact(const ArtifactPlace& where, std::size_t max_bytes);

}  // namespace loopr::git
