// What `loopr submit` and `loopr daemon` check before they create or start anything (issue
// #21): each unmet prerequisite is one line `loopr: what (what to do)` and exit 2, and nothing
// is created, neither a plan in the store nor a branch in git.
#pragma once

#include <vector>

#include <loopr/core/preflight.hpp>

#include "cli/context.hpp"

namespace loopr::cli {

/// Everything that would make a submitted plan fail for a reason known now: the provider's
/// prerequisites (`provider_checked`: false when a daemon already runs, since its environment,
/// not this shell's, is the one that counts, and it checked at its start), the code validation
/// command, the base branch, and a merge or rebase left in progress in the work tree. `force`
/// drops the problems that can be wrong (PreflightProblem::forceable).
std::vector<PreflightProblem> submit_problems(const RepoPaths& paths, const Config& config,
                                              bool provider_checked, bool force);

/// What a daemon needs to start: the provider's prerequisites (nothing when `force`).
std::vector<PreflightProblem> daemon_start_problems(const Config& config, bool force);

/// Prints every problem but the last as `loopr: what (hint)` on stderr and throws the last as a
/// CommandError (exit 2); returns when there is none. `force_hint` is added to the hint of a
/// forceable problem (e.g. "or pass --force").
void refuse_if_any(const std::vector<PreflightProblem>& problems, const std::string& force_hint);

}  // namespace loopr::cli
