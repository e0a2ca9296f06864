// `merge: pr`: the push, the pull request, its CI and its review comments (pull_request.cpp,
// ci_watch.cpp). Driver steps like the rest of driver.hpp; every one runs on the io thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <loopr/forge/forge.hpp>

#include "manager/driver.hpp"

namespace loopr::manager {

/// The PR's description: the plan's summary, the tree with each loop's outcome, the cost, what
/// was validated.
std::string pr_body(const Loop& plan, const std::vector<Loop>& tree, double cost,
                    const Config& config);
/// The forge's client for the configured repository (its name from the remote when not set).
awaitable<Result<std::unique_ptr<forge::ForgeClient>>> forge_client(ManagerState& s);
/// A push or API failure: a `forge_failed` event, the plan blocked (`forge_failed`) with what
/// failed and how to retry. Nothing else changes: the integration branch stays as it is.
awaitable<void> block_for_forge(ManagerState& s, std::string plan, std::string step, int status,
                                std::string message);
/// The gate passed (its plan's lock held): held files stop it (unless `by_person`), else push, open
/// (or find) the PR, store it; then wait for CI, or mark the tree complete.
awaitable<void> publish_pr(State s, std::string plan, bool by_person);
/// The gate had passed before a restart (same tip): CI awaited again, or publish.
awaitable<void> resume_pr(State s, Loop plan, std::string tip);
/// `loopr merge <plan>` under merge: pr (its plan's lock held): reopen a blocked plan and publish.
awaitable<Result<MergeInfo>> retry_pr(State s, std::string plan);
/// Polls the PR's head commit until a verdict (at most one watch per plan).
void start_ci_watch(const State& s, const std::string& plan);
/// `loopr iterate <plan> --from-pr`: the review comments since the last push as a fix loop.
awaitable<ActionResult> iterate_from_pr(State s, std::string plan);
/// The review comments since the last push (`review`, the web page).
awaitable<Result<std::vector<forge::ReviewComment>>> new_pr_comments(State s, std::string plan);

// pr_state.cpp
/// The PR's state as the forge just said it, stored (with a `pr_state` event) when it changed.
/// (`ended(state)`, core/loop_marks.hpp: the team merged or closed it; loopr stops waiting.)
awaitable<void> store_pr_state(ManagerState& s, std::string plan, int number,
                               PullRequestState state);
/// A plan is shown: its open PR's state asked in the background, at most once per
/// forge.ci.poll_max (never while its CI watch asks anyway).
void refresh_pr_soon(const State& s, const std::string& plan);

}  // namespace loopr::manager
