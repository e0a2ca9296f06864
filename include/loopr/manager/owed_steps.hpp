// What the manager still owes a plan's tree, as data: one pure function over the loop records
// (no run table, no store, no clock), which a restarted daemon's recovery and a completion's tree
// check both read (src/manager/tree_rules.cpp: plan_recovery, next_tree_step), and which tests
// assert directly (a tree that ended owes nothing; a daemon killed at a step owes that step).
#pragma once

#include <span>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>

namespace loopr::manager {

/// One step the manager owes a loop (or, for the last two, the plan's whole tree).
enum class Owed {
  run,                     ///< pending, running or rebasing: its run, from the record
  merge_into_integration,  ///< complete; its current iteration is not in the integration branch
  spawn_children,          ///< complete; its current iteration's children are not made yet
  retire_folder,           ///< complete; its worktree folder is still recorded
  end_dry_run,             ///< a dry run's plan that was killed before it ended at the gate
  handle_failure,          ///< failed; the failure policy (a retry or a roll-up) has not run
  archive_folder,          ///< invalidated; the worktree it had is still to be archived
  check_gate,              ///< the plan: every loop finished, the tree not marked complete
                           ///< (the integration gate checks the tip, then marks it)
  merge_into_base,         ///< the plan: the tree complete, `merge: auto`, not merged nor refused
};
const char* to_string(Owed step);

struct OwedStep {
  std::string loop_id;
  Owed step = Owed::run;
  bool operator==(const OwedStep&) const = default;
};

/// Every step owed in `loops` (a plan's tree, or every loop in the store), loop by loop in
/// their order, each loop's steps in the order the manager takes them. Empty: nothing happens
/// without a person (the tree ended, or it waits for an approval, an answer or a decision).
std::vector<OwedStep> owed_steps(std::span<const Loop> loops, MergeMode mode);

}  // namespace loopr::manager
