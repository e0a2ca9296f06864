// What a checkpoint that staged from a handed-over sweep (core/sweep_handoff.hpp) left behind,
// kept for the protection check of the next iteration (issue 47 item 3): it may then read the
// worktree's change from git and a few paths instead of walking the worktree.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace loopr {

/// The worktree is `commit`'s tree, as the index file (whose lstat data `index` are) says, plus
/// the paths git does not track there. `untracked` names the first untracked path on each branch
/// of the tree (a folder stands for everything in it), in the sweep's walk order. Nothing but
/// loopr's own file tools may write there until it is taken: every command started in the
/// worktree drops it (executor.cpp), every checkpoint replaces or drops it.
struct CleanCheckpoint {
  std::string commit;
  struct stat index {};
  std::vector<std::string> untracked;
};

/// Keeps `clean` for `worktree` until taken or dropped (one per worktree).
void keep_clean_checkpoint(const std::filesystem::path& worktree, CleanCheckpoint clean);
/// What was kept for `worktree`, removed from the keeping; nullopt when nothing is.
std::optional<CleanCheckpoint> take_clean_checkpoint(const std::filesystem::path& worktree);
/// Forgets what was kept for `path` and for every worktree `path` lies in (a command runs there).
void drop_clean_checkpoint(const std::filesystem::path& path);
/// How many are kept now (tests).
std::size_t clean_checkpoints();

}  // namespace loopr
