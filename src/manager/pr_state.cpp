// merge: pr: the pull request's state as the forge says it (open, closed, merged). The team
// merges or closes the PR on the forge, so loopr asks: on every CI poll (ci_watch.cpp), on
// `loopr merge`'s retry (pull_request.cpp), and when a plan is shown, at most once per
// forge.ci.poll_max per plan and never awaited by the reader (`show` prints what is stored;
// the next view sees the answer), so a page view never waits for the forge nor spends its
// rate limit.
#include <spdlog/spdlog.h>

#include <loopr/api/events.hpp>

#include "manager/pull_request.hpp"

namespace loopr::manager {

awaitable<void> store_pr_state(ManagerState& s, std::string plan, int number,
                               PullRequestState state) {
  s.pr_asked_ms[plan] = now_ms();
  auto loaded = co_await s.journal.load(plan);
  if (state == PullRequestState::none || !loaded || loaded->tree.pr_number != number ||
      loaded->tree.pr_state == state)
    co_return;
  spdlog::info("plan {}: pull request #{} is {} on the forge", plan, number, to_string(state));
  co_await s.journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    if (l.tree.pr_number != number || l.tree.pr_state == state)
      return make_error(ErrorCode::conflict, "moved on");  // nothing to write
    l.tree.pr_state = state;
    w.events.push_back(api::encode(l.id, api::PrState{number, to_string(state)}));
    return std::nullopt;
  });
}

namespace {

awaitable<void> refresh_now(State s, std::string plan) {
  auto loaded = co_await s->journal.load(plan);
  if (!loaded || loaded->tree.pr_number == 0 || loaded->tree.pr_state != PullRequestState::open)
    co_return;
  const int number = loaded->tree.pr_number;
  auto client = co_await forge_client(*s);
  if (!client) co_return;
  auto pr = co_await (*client)->get_pr(number);
  if (!pr) {
    spdlog::info("plan {}: cannot ask the forge about pull request #{}: {}", plan, number,
                 pr.error().message);
    co_return;
  }
  co_await store_pr_state(*s, plan, number, pr->state);
}

}  // namespace

void refresh_pr_soon(const State& s, const std::string& plan) {
  net::post(s->ctx.io, [s, plan] {
    // A CI watch asks on every poll; a stopping daemon asks nothing.
    if (s->stopping || s->ci_watches.count(plan)) return;
    const std::int64_t every = s->ctx.config->forge.ci.poll_max.count();
    std::int64_t& last = s->pr_asked_ms[plan];
    if (last > 0 && now_ms() - last < every) return;
    last = now_ms();
    net::co_spawn(s->ctx.io, refresh_now(s, plan), net::detached);
  });
}

}  // namespace loopr::manager
