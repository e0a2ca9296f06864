// `loopr gc`: what loopr made and nobody needs any more goes. Trees that ended (merged, failed —
// rejected and stopped trees included —, or complete and waiting for `loopr merge`) at least
// `gc.older_than` ago, and invalidated generations of any tree, lose their worktrees, loop
// branches and logs (`.loopr/logs/loops/<id>/`: transcripts, setup and check logs; a plan keeps
// its `events.log`, where gc's own event lands): a worktree is archived (what it held committed, the folder removed, its branch
// renamed `loopr/archive/<id>`), a loop branch whose commits are in the integration or base
// branch is deleted, one whose commits are not is archived. Archived attempts are deleted
// `gc.keep_archived` after they were archived; a plan's integration branch once the base branch
// has all of it (a merged tree, a rejected plan). git's records of loopr's worktrees whose folder
// is gone are pruned, and folders a crash set aside in `.loopr/archive/` removed after
// keep_archived.
//
// Only names of loops (and plans) in the store are touched, and only branches under `loopr/`;
// never the base branch, a loop that runs, or a tree that does not qualify. Each step acts on
// what git shows now, so a second run after a crash finishes what the first left, and a run
// with nothing left to do changes nothing.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <loopr/api/maintenance.hpp>
#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/store/task_store.hpp>

namespace loopr::manager {

struct GcOptions {
  Duration older_than = std::chrono::hours(24 * 7);
  Duration keep_archived = std::chrono::hours(24 * 30);
  bool dry_run = false;  ///< say what would go, change nothing
  TimestampMs now = 0;

  /// `config.gc`'s values, at `now`.
  static GcOptions from(const Config& config, TimestampMs now);
};

/// One thing removed (or, in a dry run, to be removed).
struct GcItem {
  api::GcKind kind;
  std::string name;  ///< the branch, or the path relative to the repository
  api::GcAction action;
  std::string kept_on;      ///< where its commits are kept now (an archived worktree or branch)
  std::uint64_t bytes = 0;  ///< disk freed (folders)
  std::string loop_id;
  std::string reason;  ///< why it could go
};

/// A loop record after gc moved its worktree or branch.
struct GcLoopChange {
  std::string loop_id;
  std::string worktree;  ///< "" once its worktree is gone
  std::string branch;    ///< where its commits are now ("" once deleted, being merged)
};

struct GcReport {
  bool dry_run = false;
  std::vector<GcItem> items;
  std::vector<GcLoopChange> changes;
  std::vector<std::string> errors;  ///< what could not be done (the rest went on)
  std::uint64_t bytes_freed = 0;

  void add(GcReport&& more);
};

/// `{"dry_run","removed":[{"kind","name","action","kept_on"?,"bytes","loop_id"?,"reason"}],
/// "errors":[…],"bytes_freed","worktrees","branches_deleted","branches_archived","logs",
/// "logs_bytes"}`.
nlohmann::json to_json(const GcReport& report);

/// A plan tree with something gc may remove.
struct GcTarget {
  std::string plan_id;
  std::string base_branch;
  bool ended = false;       ///< the whole tree qualifies (else only `loops`, invalidated ones)
  std::vector<Loop> loops;  ///< the loops whose worktrees and branches may go
};

/// The trees (and invalidated loops) that qualify now. Pure.
std::vector<GcTarget> gc_targets(std::span<const Loop> loops, const GcOptions& options,
                                 MergeMode mode, const std::string& default_base);

/// Carries out (or lists, in a dry run) the removals of one target on git and disk. Blocking.
GcReport clean_target(const RepoPaths& paths, const GcTarget& target, const GcOptions& options);

/// git's records of worktrees named after `ids` whose folder is gone, and the folders of those
/// loops a crash set aside in `.loopr/archive/`. Blocking.
GcReport clean_leftovers(const RepoPaths& paths, const std::set<std::string>& ids,
                         const GcOptions& options);

/// Applies `changes` to the loops of `tree` that still have ended (one that was resumed
/// meanwhile keeps its record; noted in `errors`), and puts them with a `gc` event of the plan
/// into `out`. Pure.
void apply_gc_changes(std::vector<Loop>& tree, const std::string& plan_id, const GcReport& report,
                      WriteSet& out, std::vector<std::string>& errors);

/// The whole of `loopr gc` on a store this process holds (no daemon runs). Blocking.
Result<GcReport> gc_store(TaskStore& store, const RepoPaths& paths, const GcOptions& options,
                          const Config& config);

}  // namespace loopr::manager
