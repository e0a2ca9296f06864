// The listing of the sweep after a command, handed to the checkpoint that follows it (issue 47
// item 3), so one walk of the worktree serves both: the checkpoint stages from what the sweep
// saw instead of sweeping again. Only the executor hands one over, only for a command whose
// every process is known to be gone when the sweep ran (a bubblewrap sandbox: its PID namespace
// dies with it), and only the caller that knows nothing else ran there since takes it.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/worktree_sweep.hpp>

namespace loopr {

/// What one sweep left in place, in its walk order (core/worktree_sweep.hpp's visitor).
struct SweptListing {
  struct Entry {
    std::string rel;
    bool folder = false;
    struct stat st {};
  };
  std::vector<Entry> entries;

  /// A SweepVisitor's call, kept.
  void add(const std::string& rel, const struct stat* st);
  /// Calls `visit` for every entry as the sweep did.
  void replay(const SweepVisitor& visit) const;
};

/// Keeps `listing` for `worktree` until taken, dropped or replaced (one per worktree).
void hand_over_sweep(const std::filesystem::path& worktree, SweptListing listing);
/// The listing handed over for `worktree`, removed from the keeping; nullopt when none is.
std::optional<SweptListing> take_handed_sweep(const std::filesystem::path& worktree);
/// Forgets what was handed over for `worktree` (something may have written it since).
void drop_handed_sweep(const std::filesystem::path& worktree);
/// How many listings are kept now (tests: none outlives its iteration).
std::size_t handed_sweeps();

/// How many times this process walked a worktree with sweep_worktree: for tests that show a
/// step did not.
std::uint64_t worktree_sweeps();

}  // namespace loopr
