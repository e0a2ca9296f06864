// CI as a validation (`merge: pr`, `forge.ci.wait`): the PR's head commit is polled with
// backoff (never longer than ci.poll_max between polls, longer only when the forge's rate limit
// says so) until its checks give a verdict or ci.timeout passes. Passing checks complete the
// tree; a failing one becomes the feedback of a CI fix loop on the integration branch (a code
// loop of the plan, under the same protection rules as every code loop), up to
// ci.fix_iterations; then the plan is held for the person with the failing checks named.
// Review comments come back the same way (`loopr iterate <plan> --from-pr`).
#include <spdlog/spdlog.h>

#include <algorithm>

#include <loopr/api/events.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/git/branches.hpp>

#include "manager/pull_request.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {

using engine::first_line;

namespace {

constexpr int kMaxErrorsInARow = 5;  // network or 5xx answers before the plan is held

// The plan still waits for CI on `sha` (nothing moved it on: a new push, a person, a stop).
bool still_waiting(const Loop& p, const std::string& sha) {
  return p.status == LoopStatus::complete && !p.tree.tree_complete && p.tree.pr_head == sha &&
         p.tree.pr_checks == PrChecks::pending;
}

std::string failing_line(const forge::CiState& ci) {
  std::string out;
  for (const forge::Check& c : ci.checks)
    if (c.state == forge::CheckState::failed) out += (out.empty() ? "" : ", ") + c.name;
  return out.empty() ? "(unnamed)" : out;
}

std::string failing_feedback(const forge::CiState& ci, int number) {
  std::string out = "The checks of pull request #" + std::to_string(number) + " fail:\n";
  for (const forge::Check& c : ci.checks)
    if (c.state == forge::CheckState::failed)
      out += "\n" + c.details + (c.url.empty() ? "" : "\n(" + c.url + ")") + "\n";
  return out;
}

std::vector<std::string> merged_code_loops(const std::vector<Loop>& tree) {
  std::vector<std::string> out;
  for (const Loop& l : tree)
    if (l.type == LoopType::code && l.status == LoopStatus::complete)
      out.push_back(l.id + " (" + first_line(l.task, 80) + ")");
  return out;
}

// A fix loop on the integration branch with `feedback` (the gate's fix loop, another task).
Loop forge_fix_loop(const Loop& plan, const std::vector<Loop>& tree, const std::string& task,
                    const std::string& summary, const std::string& feedback, FeedbackSource source,
                    const Config& config) {
  Loop fix = make_fix_loop(plan, next_fix_number(tree, plan.id), summary, feedback,
                           merged_code_loops(tree), config);
  fix.task = task + "\nPlan: " + first_line(plan.task, 200);
  fix.run.feedback.clear();
  engine::add_feedback(fix.run, FeedbackEntry{0, source, first_line(summary, 100), feedback});
  return fix;
}

awaitable<void> ci_verdict(State s, std::string plan, std::string sha, forge::CiState ci,
                           bool timed_out) {
  auto guard = co_await s->plan_locks.lock(plan);
  const Config& config = *s->ctx.config;
  Loop fix;
  bool made_fix = false;
  co_await s->journal.edit_tree(
      plan, [&](std::vector<Loop>& tree, WriteSet& w) -> std::optional<Error> {
        auto root = std::find_if(tree.begin(), tree.end(), [&](const Loop& l) { return l.id == plan; });
        if (root == tree.end() || !still_waiting(*root, sha)) return std::nullopt;
        Loop p = *root;
        const int number = p.tree.pr_number;
        if (ci.state == forge::CheckState::passed) {
          p.tree.pr_checks = PrChecks::passed;
          p.tree.pr_failing.clear();
          p.tree.tree_complete = true;
          w.events.push_back(api::encode(plan, api::CiChecked{sha, "passed", {}, "every check passes"}));
          w.events.push_back(api::encode(plan, api::TreeComplete{}));
          w.updates.push_back(std::move(p));
          return std::nullopt;
        }
        const std::string failing = timed_out ? "no verdict within forge.ci.timeout" : failing_line(ci);
        p.tree.pr_checks = PrChecks::failed;
        p.tree.pr_failing = failing;
        w.events.push_back(api::encode(plan, api::CiChecked{sha, timed_out ? "timeout" : "failed",
                                                            ci.failing(), failing}));
        made_fix = !timed_out && p.tree.ci_fixes < config.forge.ci.fix_iterations;
        if (made_fix) {
          ++p.tree.ci_fixes;
          fix = forge_fix_loop(
              p, tree,
              "Make the failing CI checks (" + failing + ") of pull request #" +
                  std::to_string(number) + " pass on the integration branch " +
                  git::integration_branch(plan) + ". `" + config.loop(LoopType::code).validation +
                  "` passes locally; the forge's CI fails. Fix the code, not the tests or the CI "
                  "configuration.",
              "CI fails: " + failing, failing_feedback(ci, number), FeedbackSource::ci, config);
          w.creates.push_back(fix);
          w.events.push_back(api::encode(fix.id, api::LoopCreated{LoopType::code, plan,
                                                                  first_line(fix.task, 200), true, false}));
          w.events.push_back(api::encode(plan, api::CiFix{fix.id, "ci", p.tree.ci_fixes}));
        } else {
          std::string why = "the checks of pull request #" + std::to_string(number) + " (" +
                            p.tree.pr_url + ")" +
                            (timed_out ? " gave no verdict within forge.ci.timeout (" +
                                             format_duration(config.forge.ci.timeout) + ")"
                                       : " fail: " + failing + " after " +
                                             std::to_string(p.tree.ci_fixes) + " fix loop(s)") +
                            " (fix it on branch " + git::integration_branch(plan) +
                            ", then `loopr merge " + plan + "` pushes and waits again)";
          if (!engine::transition(p, LoopStatus::blocked, EndReason::ci_failed, why, w.events))
            return not_allowed(p, "cannot block");
        }
        w.updates.push_back(std::move(p));
        return std::nullopt;
      });
  if (made_fix) spawn_run(s, fix.id);
}

// The team merged or closed the PR while its checks were awaited: nothing more to wait for. The
// tree is complete (checks `skipped`); a closed PR's plan gets a new one with `loopr merge`.
awaitable<void> ended_on_forge(State s, std::string plan, std::string sha, PullRequestState state) {
  auto guard = co_await s->plan_locks.lock(plan);
  co_await s->journal.edit(plan, [&](Loop& p, WriteSet& w) -> std::optional<Error> {
    if (!still_waiting(p, sha)) return make_error(ErrorCode::conflict, "moved on");
    if (p.tree.pr_state != state)
      w.events.push_back(api::encode(plan, api::PrState{p.tree.pr_number, to_string(state)}));
    p.tree.pr_state = state;
    p.tree.pr_checks = PrChecks::skipped;
    p.tree.tree_complete = true;
    w.events.push_back(api::encode(plan, api::TreeComplete{}));
    return std::nullopt;
  });
}

struct WatchMark {
  State s;
  std::string plan;
  ~WatchMark() { s->ci_watches.erase(plan); }
};

awaitable<void> sleep_for(ManagerState& s, std::chrono::milliseconds d) {
  net::steady_timer t(s.ctx.io, d);
  boost::system::error_code ec;
  co_await t.async_wait(net::redirect_error(net::use_awaitable, ec));
}

awaitable<void> watch_ci(State s, std::string plan) {
  WatchMark mark{s, plan};
  auto loaded = co_await s->journal.load(plan);
  if (!loaded || !still_waiting(*loaded, loaded->tree.pr_head)) co_return;
  const std::string sha = loaded->tree.pr_head;
  const int number = loaded->tree.pr_number;
  auto client = co_await forge_client(*s);
  if (!client) {
    co_await block_for_forge(*s, plan, "checks", 0, client.error().message);
    co_return;
  }
  const auto timeout = s->ctx.config->forge.ci.timeout;
  const std::int64_t deadline_ms = loaded->tree.pr_pushed_at + timeout.count();
  std::chrono::milliseconds wait(1000);
  int errors = 0;
  while (!s->stopping) {
    co_await sleep_for(*s, wait);
    if (s->stopping) co_return;  // the next start polls again
    auto now = co_await s->journal.load(plan);
    if (!now || !still_waiting(*now, sha)) co_return;
    const auto poll_max = s->ctx.config->forge.ci.poll_max;
    wait = std::min<std::chrono::milliseconds>(wait * 2, poll_max);
    // The PR first: one the team merged or closed ends the wait (its state is stored either way).
    auto pr = co_await (*client)->get_pr(number);
    if (pr) {
      co_await store_pr_state(*s, plan, number, pr->state);
      if (ended(pr->state)) {
        co_await ended_on_forge(s, plan, sha, pr->state);
        co_return;
      }
    }
    Result<forge::CiState> ci = forge::CiState{};
    if (pr)
      ci = co_await (*client)->checks(sha, number);
    else
      ci = pr.take_error();
    if (!ci) {
      const forge::Failure& f = (*client)->last_failure();
      if (f.rate_limited) {  // the forge said when: that wins over poll_max
        wait = std::chrono::duration_cast<std::chrono::milliseconds>(f.retry_after);
        spdlog::info("plan {}: the forge's rate limit: polling again in {} s", plan, f.retry_after.count());
        continue;
      }
      if ((f.status == 0 || f.status >= 500) && ++errors < kMaxErrorsInARow) continue;
      co_await block_for_forge(*s, plan, "checks", f.status, ci.error().message);
      co_return;
    }
    errors = 0;
    if (const auto& rate = (*client)->rate_limit(); rate.remaining == 0 && rate.reset_epoch_s > 0) {
      const std::int64_t until = rate.reset_epoch_s - now_ms() / 1000;
      wait = std::max(wait, std::chrono::milliseconds(std::max<std::int64_t>(1, until) * 1000));
    }
    if (ci->state == forge::CheckState::pending) {
      if (now_ms() < deadline_ms) continue;
      co_await ci_verdict(s, plan, sha, std::move(*ci), true);
      co_return;
    }
    spdlog::info("plan {}: the checks of {} {}", plan, sha.substr(0, 12), to_string(ci->state));
    co_await ci_verdict(s, plan, sha, std::move(*ci), false);
    co_return;
  }
}

}  // namespace

void start_ci_watch(const State& s, const std::string& plan) {
  if (s->stopping || !s->ci_watches.insert(plan).second) return;
  net::co_spawn(s->ctx.io, watch_ci(s, plan), net::detached);
}

awaitable<Result<std::vector<forge::ReviewComment>>> new_pr_comments(State s, std::string plan) {
  auto loaded = co_await s->journal.load(plan);
  if (!loaded) co_return loaded.take_error();
  if (loaded->type != LoopType::plan || loaded->tree.pr_number == 0)
    co_return make_error(ErrorCode::illegal_transition,
                         "plan " + plan + " has no pull request (merge: pr opens one when its "
                                          "tree is complete)");
  auto client = co_await forge_client(*s);
  if (!client) co_return client.take_error();
  co_return co_await (*client)->comments(loaded->tree.pr_number, loaded->tree.pr_pushed_at);
}

awaitable<ActionResult> iterate_from_pr(State s, std::string plan) {
  auto comments = co_await new_pr_comments(s, plan);
  if (!comments) co_return comments.take_error();
  if (comments->empty())
    co_return make_error(ErrorCode::illegal_transition,
                         "no review comments on the pull request of plan " + plan +
                             " since the last push");
  std::string feedback = "Review comments on the pull request (since its last push):\n";
  for (const forge::ReviewComment& c : *comments)
    feedback += "\n- " + c.path + (c.line > 0 ? ":" + std::to_string(c.line) : "") + " (" +
                c.author + "): " + c.body;
  auto guard = co_await s->plan_locks.lock(plan);
  const Config& config = *s->ctx.config;
  Loop fix, out;
  auto stored = co_await s->journal.edit_tree(
      plan, [&](std::vector<Loop>& tree, WriteSet& w) -> std::optional<Error> {
        auto root = std::find_if(tree.begin(), tree.end(), [&](const Loop& l) { return l.id == plan; });
        if (root == tree.end()) return make_error(ErrorCode::not_found, "no plan " + plan);
        for (const Loop& l : tree)
          if (l.status == LoopStatus::running || l.status == LoopStatus::pending)
            return not_allowed(*root, "a loop of its tree still runs (" + l.id + ")");
        Loop p = *root;
        if (p.status == LoopStatus::blocked && p.end_reason == EndReason::ci_failed &&
            !engine::transition(p, LoopStatus::complete, EndReason::approved,
                                "review comments taken from its pull request", w.events))
          return not_allowed(p, "cannot reopen");
        if (p.status != LoopStatus::complete) return not_allowed(p, "it is not complete");
        p.tree.tree_complete = false;
        p.tree.pr_checks = PrChecks::none;
        // The comments taken are old from now on, also when the fix loop's push falls in the
        // same second as the newest of them (a forge's `since` has second precision and
        // includes that second).
        for (const forge::ReviewComment& c : *comments)
          if (auto at = parse_timestamp(c.created_at))
            p.tree.pr_pushed_at = std::max<std::int64_t>(p.tree.pr_pushed_at, *at + 1000);
        fix = forge_fix_loop(p, tree,
                             "Address the review comments on pull request #" +
                                 std::to_string(p.tree.pr_number) + " on the integration branch " +
                                 git::integration_branch(plan) + " (they are in the feedback).",
                             std::to_string(comments->size()) + " review comment(s)", feedback,
                             FeedbackSource::review, config);
        w.creates.push_back(fix);
        w.events.push_back(api::encode(fix.id, api::LoopCreated{LoopType::code, plan,
                                                                first_line(fix.task, 200), true, false}));
        w.events.push_back(api::encode(plan, api::CiFix{fix.id, "review",
                                                        static_cast<int>(comments->size())}));
        w.updates.push_back(p);
        out = p;
        return std::nullopt;
      });
  if (!stored) co_return stored.take_error();
  spawn_run(s, fix.id);
  co_return out;
}

}  // namespace loopr::manager
