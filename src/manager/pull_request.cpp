// `merge: pr` (docs/guide.md "Pull requests and CI"): a tree whose integration tip passed the gate
// is pushed to `forge.remote` as `loopr/<plan>` and gets a pull request; with `forge.ci.wait` the
// head commit's checks are polled (ci_watch.cpp) and a failing check makes a CI fix loop on the
// integration branch, whose completion brings the tree back through the gate and here (a new
// push, the same PR). The base branch is never touched. A failed push or API call blocks the
// plan (`forge_failed`) with what failed; `loopr merge <plan>` retries. The token is the
// daemon's (ManagerState::forge_token) and goes only to forge::push_branch and the forge client.
#include "manager/pull_request.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include <loopr/api/events.hpp>
#include <loopr/core/merge_policy.hpp>
#include <loopr/core/protected_paths.hpp>
#include <loopr/core/text.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/forge/forge.hpp>
#include <loopr/git/branches.hpp>

#include "manager/driver.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {

using engine::first_line;

namespace {

std::string retry_hint(const std::string& plan) {
  return "fix the cause, then `loopr merge " + plan + "` retries";
}

std::string outcome_of(const Loop& l) {
  std::string out = std::string(to_string(l.status));
  if (l.end_reason != EndReason::none) out += " (" + std::string(to_string(l.end_reason)) + ")";
  return out;
}

}  // namespace

// The model wrote the loops' tasks (from its artifacts) and the check's summary quotes its
// tests: shown on the forge through the one sanitiser, one line each.
static std::string safe_line(const std::string& text, std::size_t max) {
  return terminal_text(first_line(text, max));
}

std::string pr_body(const Loop& plan, const std::vector<Loop>& tree, double cost,
                    const Config& config) {
  std::string body = "## Summary\n\n" + safe_line(plan.task, 2000) + "\n\n## Loops\n\n";
  for (const Loop& l : tree) {
    if (l.status == LoopStatus::invalidated) continue;
    const int depth = static_cast<int>(std::count(l.id.begin(), l.id.end(), '-')) -
                      static_cast<int>(std::count(plan.id.begin(), plan.id.end(), '-'));
    body += std::string(static_cast<std::size_t>(std::max(0, depth)) * 2, ' ') + "- `" + l.id +
            "` " + to_string(l.type) + ": " + safe_line(l.task, 100) + " — " + outcome_of(l) +
            ", " + std::to_string(l.iteration) + " iteration(s)\n";
  }
  char usd[32];
  std::snprintf(usd, sizeof usd, "%.2f", cost);
  body += "\n## Cost\n\nUSD " + std::string(usd) + " for the whole tree.\n\n## Validated\n\n";
  body += "- every code loop passed `" + config.loop(LoopType::code).validation +
          "` on its own branch\n";
  body += "- the integration branch passed it too (the integration gate" +
          (plan.tree.gate_sha.empty() ? std::string() : " at " + plan.tree.gate_sha.substr(0, 12)) +
          "): " + safe_line(plan.tree.gate_summary, 200) + "\n";
  body += config.forge.ci.wait ? "- loopr waits for this pull request's checks and fixes what "
                                 "fails (up to " +
                                     std::to_string(config.forge.ci.fix_iterations) + " times)\n"
                               : "";
  body += "\nOpened by loopr (plan " + plan.id + "); merging it is yours.\n";
  return body;
}

awaitable<Result<std::unique_ptr<forge::ForgeClient>>> forge_client(ManagerState& s) {
  const ForgeConfig f = s.ctx.config->forge;
  auto resolve = [root = s.ctx.paths.root, f] { return forge::resolve_repo(root, f); };
  auto repo = co_await run_blocking(s.ctx.pool, resolve);
  if (!repo) co_return repo.take_error();
  co_return forge::make_client(s.ctx.io, f, *repo, s.forge_token);
}

awaitable<void> block_for_forge(ManagerState& s, std::string plan, std::string step, int status,
                                std::string message) {
  const std::string why = message + " (" + retry_hint(plan) + ")";
  spdlog::warn("plan {}: {}", plan, why);
  co_await s.journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    l.tree.pr_error = why;
    w.events.push_back(
        api::encode(l.id, api::ForgeFailed{step, status, message, "loopr merge " + plan}));
    if (l.status == LoopStatus::complete &&
        !engine::transition(l, LoopStatus::blocked, EndReason::forge_failed, why, w.events))
      return not_allowed(l, "cannot block");
    return std::nullopt;
  });
}

namespace {

// Files a person reviews first (loopr's own, the harness, other tools' auto-run files such as
// CI workflows, which a push would run on the forge): whether the plan's changes touch any (or
// cannot be told), in which case the plan is blocked, held for review.
awaitable<bool> held_for_review(ManagerState& s, std::string plan) {
  const std::shared_ptr<const Config> config = s.ctx.config;
  const std::string base = config->base_branch;
  const std::string branch = git::integration_branch(plan);
  MergeRules rules = merge_rules(*config);
  rules.approved_plan = co_await approved_plan_text(s, plan);
  auto check = [wt = s.worktrees, plan, base, rules] { return wt.held_changes(plan, base, rules); };
  auto held = co_await run_blocking(s.ctx.pool, check);
  if (held && held->empty()) co_return false;
  std::string problem =
      held ? "its changes touch files held for your review: " + describe_held(*held) +
                 " (review them with `git diff " + base + "..." + branch + "`, then `loopr merge " +
                 plan + "` pushes it and opens the pull request)"
           : "cannot tell which files it changes: " + held.error().message;
  co_await s.journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    l.tree.merge_error = problem;
    if (held) {
      l.tree.conflicts.clear();
      for (const HeldPath& h : *held) l.tree.conflicts.push_back(h.path);
    }
    w.events.push_back(api::encode(l.id, api::MergeFailed{config->forge.remote, problem}));
    if (!engine::transition(l, LoopStatus::blocked, EndReason::held_for_review, problem, w.events))
      return not_allowed(l, "cannot block");
    return std::nullopt;
  });
  co_return true;
}

// Stores the published pull request on the plan; without `forge.ci.wait` the tree is complete.
awaitable<bool> store_pr(ManagerState& s, std::string plan, forge::PullRequest pr,
                         forge::Pushed pushed, std::string remote, bool created, bool wait) {
  auto stored = co_await s.journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    l.tree.pr_number = pr.number;
    l.tree.pr_url = pr.url;
    l.tree.pr_state = pr.state == PullRequestState::none ? PullRequestState::open : pr.state;
    l.tree.pr_head = pushed.sha;
    // Never earlier than before: taking review comments moves it past them (ci_watch.cpp).
    l.tree.pr_pushed_at = std::max<std::int64_t>(l.tree.pr_pushed_at, now_ms());
    l.tree.pr_checks = wait ? PrChecks::pending : PrChecks::skipped;
    l.tree.pr_failing.clear();
    l.tree.pr_error.clear();
    l.tree.merge_error.clear();
    w.events.push_back(
        api::encode(l.id, api::PrPublished{pr.number, pr.url, pushed.sha, remote, created}));
    if (!wait) {
      l.tree.tree_complete = true;
      w.events.push_back(api::encode(l.id, api::TreeComplete{}));
    }
    return std::nullopt;
  });
  co_return static_cast<bool>(stored);
}

}  // namespace

awaitable<void> publish_pr(State state, std::string plan, bool by_person) {
  ManagerState& s = *state;
  const std::shared_ptr<const Config> config = s.ctx.config;
  const std::string base = config->base_branch;
  const std::string branch = git::integration_branch(plan);
  if (!by_person && co_await held_for_review(s, plan)) co_return;
  const std::string remote = config->forge.remote;
  auto push = [root = s.ctx.paths.root, remote, branch, token = s.forge_token] {
    return forge::push_branch(root, remote, branch, token);
  };
  auto pushed = co_await run_blocking(s.ctx.pool, push);
  if (!pushed) {
    co_await block_for_forge(s, plan, "push", 0, pushed.error().message);
    co_return;
  }
  auto tree = co_await s.journal.tree(plan);
  if (!tree) co_return;
  const Loop* root = nullptr;
  for (const Loop& l : *tree)
    if (l.id == plan) root = &l;
  if (!root) co_return;
  auto client = co_await forge_client(s);
  if (!client) {
    co_await block_for_forge(s, plan, "open_pr", 0, client.error().message);
    co_return;
  }
  forge::PrRequest request{branch, root->tree.base_branch.empty() ? base : root->tree.base_branch,
                           "loopr: " + safe_line(root->task, 100),
                           pr_body(*root, *tree, s.ctx.costs.total(plan), *config)};
  bool created = false;
  auto pr = co_await (*client)->open_pr(request, created);
  if (!pr) {
    co_await block_for_forge(s, plan, "open_pr", (*client)->last_failure().status,
                             pr.error().message);
    co_return;
  }
  const bool wait = config->forge.ci.wait;
  spdlog::info("plan {}: pushed {} to {} ({}); pull request #{} {}", plan, branch, remote,
               pushed->sha.substr(0, 12), pr->number, pr->url);
  if (co_await store_pr(s, plan, *pr, *pushed, remote, created, wait) && wait)
    start_ci_watch(state, plan);
}

awaitable<void> resume_pr(State s, Loop plan, std::string tip) {
  if (plan.tree.pr_number > 0 && plan.tree.pr_head == tip && plan.tree.pr_checks == PrChecks::pending) {
    start_ci_watch(s, plan.id);  // a restart while CI ran: poll again
    co_return;
  }
  co_await publish_pr(s, plan.id, false);
}

// `loopr merge` of a plan whose PR the team merged meanwhile, with nothing new since its push:
// nothing to push; its state is stored and the plan's tree is complete. A PR still open, closed
// (`loopr merge` opens a new one), work not pushed yet (a new PR takes it) or a forge that
// cannot tell: an empty MergeInfo, and the retry goes on.
static awaitable<Result<MergeInfo>> merged_on_forge(State s, Loop p) {
  const int number = p.tree.pr_number;
  auto tip_of = [wt = s->worktrees, plan = p.id] { return wt.integration_tip(plan); };
  auto tip = co_await run_blocking(s->ctx.pool, tip_of);
  if (!tip || *tip != p.tree.pr_head) co_return MergeInfo{};
  auto client = co_await forge_client(*s);
  if (!client) co_return MergeInfo{};
  auto pr = co_await (*client)->get_pr(number);
  if (!pr) co_return MergeInfo{};
  co_await store_pr_state(*s, p.id, number, pr->state);
  if (pr->state != PullRequestState::merged) co_return MergeInfo{};
  auto done = co_await s->journal.edit(p.id, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    if (l.status == LoopStatus::blocked &&
        !engine::transition(
            l, LoopStatus::complete, EndReason::approved,
            "its pull request #" + std::to_string(number) + " was merged on the forge", w.events))
      return not_allowed(l, "cannot reopen");
    if (!l.tree.tree_complete) w.events.push_back(api::encode(l.id, api::TreeComplete{}));
    l.tree.tree_complete = true;
    l.tree.pr_error.clear();
    return std::nullopt;
  });
  if (!done) co_return done.take_error();
  co_return MergeInfo{p.id,   done->tree.base_branch, done->tree.pr_head,
                      number, done->tree.pr_url,      PullRequestState::merged};
}

awaitable<Result<MergeInfo>> retry_pr(State s, std::string plan) {
  auto loaded = co_await s->journal.load(plan);
  if (!loaded) co_return loaded.take_error();
  Loop p = std::move(*loaded);
  const bool held = p.status == LoopStatus::blocked && (p.end_reason == EndReason::forge_failed ||
                                                        p.end_reason == EndReason::ci_failed ||
                                                        p.end_reason == EndReason::held_for_review);
  if (!held && !(p.status == LoopStatus::complete && p.tree.tree_complete))
    co_return make_error(ErrorCode::illegal_transition,
                         "plan " + plan + " has no pull request to retry: it is " +
                             to_string(p.status) + " (its tree is not finished)");
  if (p.tree.pr_number > 0) {
    auto merged = co_await merged_on_forge(s, p);
    if (!merged || merged->pr_number > 0) co_return merged;
  }
  auto reopened = co_await s->journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    l.tree.ci_fixes = 0;  // a person's retry: CI gets its fix loops again
    l.tree.tree_complete = false;
    if (l.status == LoopStatus::blocked &&
        !engine::transition(l, LoopStatus::complete, EndReason::approved,
                            "the person retries its pull request (`loopr merge`)", w.events))
      return not_allowed(l, "cannot reopen");
    return std::nullopt;
  });
  if (!reopened) co_return reopened.take_error();
  co_await publish_pr(s, plan, true);
  auto after = co_await s->journal.load(plan);
  if (!after) co_return after.take_error();
  if (after->status == LoopStatus::blocked)
    co_return make_error(ErrorCode::conflict, "plan " + plan + ": " + after->status_reason);
  co_return MergeInfo{plan,
                      after->tree.base_branch,
                      after->tree.pr_head,
                      after->tree.pr_number,
                      after->tree.pr_url,
                      after->tree.pr_state};
}

}  // namespace loopr::manager
