// The git work of loops (DESIGN.md "Git model"), in the module that owns git's layout: a loop's
// branch and worktree, its plan's integration branch, merges into it and from it into the base
// branch, retiring and archiving worktrees, reading an artifact a worktree no longer holds, and
// clearing what a killed daemon left half done. The manager decides when; this says how.
//
// Blocking calls for a thread pool, safe from any thread (each opens the repository itself,
// see repository.hpp). Names come from branches.hpp: integration `loopr/<plan>`, a loop's
// `loopr/<plan>-loops/<id>`, its worktree `.loopr/worktrees/<id>`.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/loop.hpp>
#include <loopr/core/merge_policy.hpp>
#include <loopr/core/protected_paths.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/core/result.hpp>
#include <loopr/git/types.hpp>

namespace loopr::git {

/// A loop's worktree as `prepare` left it.
struct PreparedWorktree {
  std::string worktree;  ///< absolute path
  std::string branch;
  /// Set when the branch was made now: the integration tip it starts from (what the loop is
  /// "based on" until the next rebase).
  std::optional<std::string> based_on;
};

/// What merging a finished loop into its plan's integration branch did.
struct IntegrationMerge {
  MergeOutcome merge;                  ///< kind and the integration tip afterwards
  std::vector<std::string> conflicts;  ///< conflict (or would-be-overwritten) paths, if any
  /// The loop's work was rebased onto the moved integration tip and NOT merged yet (asked with
  /// `merge_after_rebase` false): its validation runs again first.
  bool rebased_unmerged = false;
  /// What the merge policy refuses in the loop's committed work (core/merge_policy.hpp): when
  /// not empty, nothing was merged.
  std::vector<HeldPath> refused = {};
};

/// A checkout of a plan's integration tip for the integration gate.
struct GateCheckout {
  std::string worktree;  ///< absolute path (`.loopr/worktrees/<plan>-gate`)
  std::string sha;       ///< the integration tip checked out
};

class LoopWorktrees {
 public:
  explicit LoopWorktrees(std::filesystem::path repo_root) : paths_(std::move(repo_root)) {}

  const RepoPaths& paths() const { return paths_; }

  // -- plans

  /// invalid_argument (with what to do) when `base_branch` does not exist.
  Result<void> check_base(const std::string& base_branch) const;
  /// True when the integration branch of `plan_id` exists (a store deleted by hand).
  Result<bool> plan_branches_exist(const std::string& plan_id) const;
  /// Makes the integration branch of `plan_id` from the tip of `base_branch`.
  Result<void> start_plan(const std::string& plan_id, const std::string& base_branch) const;

  // -- a loop's worktree

  /// The loop's worktree, made when it has none: the integration branch is made from
  /// `base_branch` if missing, the loop's branch from the integration tip if missing. Repairs
  /// what a killed daemon left: a folder git does not know is set aside (moved to
  /// `.loopr/archive/`), a registration the record does not name is made again, a half-made
  /// registration is dropped.
  Result<PreparedWorktree> prepare(const Loop& loop, const std::string& base_branch) const;

  /// The tip of the plan's integration branch.
  Result<std::string> integration_tip(const std::string& plan_id) const;

  /// Rebases the loop's worktree onto its plan's integration branch. Uncommitted edits an
  /// interrupted iteration left are committed first when they would be in the way.
  Result<RebaseOutcome> rebase_onto_integration(const Loop& loop) const;

  /// Whether the integration branch changed, since the loop's `based_on`, a path the loop's
  /// branch changed (Worktree::work_meets_changes): only then does it rebase at a boundary.
  Result<bool> integration_meets_work(const Loop& loop) const;

  /// Merges the loop's branch into its plan's integration branch. `rebuild`: the integration
  /// branch is made again from `base_branch` first (a plan starting a new generation of
  /// children). When the integration branch moved under the loop so that the merge conflicts,
  /// the loop's work is rebased onto the new tip and merged again, or, with
  /// `merge_after_rebase` false, left rebased and unmerged for its validation to run again.
  /// Before any merge, the merge policy runs over what the loop's branch commits since its
  /// fork from the integration branch (`refusal_rules`, core/merge_policy.hpp, only what is
  /// refused outright): a refused entry stops the merge (`IntegrationMerge::refused`).
  Result<IntegrationMerge> merge_into_integration(const Loop& loop, bool rebuild,
                                                  const std::string& base_branch,
                                                  const std::string& message,
                                                  bool merge_after_rebase = true,
                                                  const MergeRules& refusal_rules = {}) const;

  /// The paths merging the plan's integration branch into `base_branch` would change that a
  /// person reviews first, or that are refused (core/merge_policy.hpp `merge_policy` over the
  /// committed tree diff): loopr's own files (always), then those matching `harness`
  /// (protect.harness), the hook folders, symlinks, existing tests the approved plan does not
  /// name, then `hold` (protect.hold).
  Result<std::vector<HeldPath>> held_changes(const std::string& plan_id,
                                             const std::string& base_branch,
                                             const MergeRules& rules) const;

  /// Merges a plan's integration branch into `base_branch` (see Repository::merge: the user's
  /// work tree is updated, their uncommitted edits never lost).
  Result<MergeOutcome> merge_plan_into_base(const std::string& plan_id,
                                            const std::string& base_branch,
                                            const std::string& message) const;

  // -- the integration gate

  /// A fresh worktree of the plan's integration tip (`.loopr/worktrees/<plan>-gate`, on branch
  /// `loopr/<plan>-gate`) where the integration check runs; one a killed daemon left is
  /// removed first.
  Result<GateCheckout> prepare_gate(const std::string& plan_id) const;
  /// Removes the gate's worktree, whatever the check left in it, and its branch.
  Result<void> remove_gate(const std::string& plan_id) const;

  // -- the baseline check (the tests before any code loop) and other scratch checkouts

  /// A fresh worktree of the plan's integration tip (`.loopr/worktrees/<plan>-baseline`) where
  /// the baseline check runs; one a killed daemon left is removed first.
  Result<GateCheckout> prepare_baseline(const std::string& plan_id) const;
  Result<void> remove_baseline(const std::string& plan_id) const;
  /// Merges `base_branch` into the plan's integration branch (a person fixed the base after
  /// its baseline check failed, before any code loop's work is there).
  Result<MergeOutcome> update_from_base(const std::string& plan_id, const std::string& base_branch,
                                        const std::string& message) const;
  /// A worktree `.loopr/worktrees/<name>` on a new branch `loopr/<name>` made at `start` (a
  /// branch or commit); what was there under that name is removed first, with the git locks a
  /// killed daemon left on that branch and worktree record (the caller runs one of a name at a
  /// time).
  Result<GateCheckout> prepare_scratch(const std::string& name, const std::string& start) const;
  /// Removes the scratch worktree `name` and its branch, whatever is in it.
  Result<void> remove_scratch(const std::string& name) const;

  /// Removes a finished loop's worktree folder (the branch stays); a folder git does not know is
  /// set aside instead. conflict when it has uncommitted changes; not_found when there is none.
  Result<void> retire(const std::string& loop_id) const;

  /// Archives the loop's worktree (Repository::archive_worktree): the branch where its commits
  /// are kept now, or empty when the loop had no worktree.
  Result<std::string> archive(const std::string& loop_id, const std::string& message) const;

  /// Whether a worktree folder (a path a record names) is still on disk.
  bool folder_exists(const std::string& worktree) const;

  /// Commits what the worktree holds (a run stopped mid-iteration); true when there was some.
  Result<bool> checkpoint(const std::string& worktree, const std::string& message) const;

  /// The loop's first output artifact, at most `max_bytes + 1` bytes, through the one reader
  /// (git/artifact.hpp): from its worktree when it is a regular file there reached without a
  /// symlink, else as committed on its branch, its archive branch, its plan's integration branch.
  Result<std::string> read_artifact(const Loop& loop, std::size_t max_bytes) const;

  // -- after a crash

  /// Lock files a killed daemon left on the loops' branches (their own, their archive branch,
  /// their plan's integration branch) and worktree records. Pass the loops that were being
  /// worked on; only this daemon writes these names.
  Result<std::vector<std::string>> clear_locks(std::span<const Loop> loops) const;

  /// Folders in `.loopr/worktrees/` that git does not know as worktrees, of loops not in
  /// `may_have_folder`, are set aside (moved to `.loopr/archive/`); returns their ids.
  Result<std::vector<std::string>> set_aside_strays(
      const std::set<std::string>& may_have_folder) const;

 private:
  RepoPaths paths_;
};

}  // namespace loopr::git
