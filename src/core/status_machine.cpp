// The one transition table of loopr. Every status change is checked here.
#include <array>
#include <string>

#include <loopr/core/loop.hpp>

namespace loopr {
namespace {

using S = LoopStatus;
constexpr std::size_t kCount = std::size(kAllLoopStatuses);

struct Edge {
  S from;
  S to;
};

// Why each edge exists:
//  pending   → running (scheduled), paused/stopped (user), failed (setup failed: no worktree),
//              invalidated (parent iterated before it started), blocked (a `setup:` command
//              failed in its new worktree before its first iteration)
//  running   → pending (daemon restart re-queues it), paused, rebasing (integration moved),
//              blocked (rebase conflict), awaiting_approval (valid plan), awaiting_answer
//              (the model asked the person), complete (validation
//              passed), failed (limit hit), stopped (user), invalidated (parent iterated)
//  paused    → running/pending (resume), stopped, invalidated
//  rebasing  → running (rebase done), pending, blocked (conflict), paused, stopped, failed,
//              invalidated
//  blocked   → running/pending (resume after a manual fix), rebasing (retry), paused, stopped,
//              failed, invalidated, complete (a plan whose integration gate failed: resumed or
//              merged by the person)
//  awaiting_approval → complete (approve), failed (reject), running (iterate with feedback),
//              stopped, invalidated
//  awaiting_answer → pending (answered: queued to run), paused, stopped, failed, invalidated
//  complete  → running (a plan iterated after approval), invalidated (an ancestor iterated),
//              failed (a descendant failed for good: the roll-up), blocked (its merge into the
//              integration branch conflicts)
//  failed    → pending (retry), invalidated, complete (an ancestor that failed only through a
//              descendant's roll-up, when the person iterates that descendant)
//  stopped   → pending (resume), invalidated
//  invalidated → nothing: it is kept only for reference.
constexpr Edge kEdges[] = {
    {S::pending, S::running},        {S::pending, S::paused},
    {S::pending, S::stopped},        {S::pending, S::failed},
    {S::pending, S::invalidated},    {S::pending, S::blocked},

    {S::running, S::pending},        {S::running, S::paused},
    {S::running, S::rebasing},       {S::running, S::blocked},
    {S::running, S::awaiting_approval}, {S::running, S::awaiting_answer},
    {S::running, S::complete},
    {S::running, S::failed},         {S::running, S::stopped},
    {S::running, S::invalidated},

    {S::paused, S::running},         {S::paused, S::pending},
    {S::paused, S::stopped},         {S::paused, S::invalidated},

    {S::rebasing, S::running},       {S::rebasing, S::pending},
    {S::rebasing, S::blocked},       {S::rebasing, S::paused},
    {S::rebasing, S::stopped},       {S::rebasing, S::failed},
    {S::rebasing, S::invalidated},

    {S::blocked, S::running},        {S::blocked, S::pending},
    {S::blocked, S::rebasing},       {S::blocked, S::paused},
    {S::blocked, S::stopped},        {S::blocked, S::failed},
    {S::blocked, S::invalidated},    {S::blocked, S::complete},

    {S::awaiting_approval, S::complete}, {S::awaiting_approval, S::failed},
    {S::awaiting_approval, S::running},  {S::awaiting_approval, S::stopped},
    {S::awaiting_approval, S::invalidated},

    {S::awaiting_answer, S::pending},    {S::awaiting_answer, S::paused},
    {S::awaiting_answer, S::stopped},    {S::awaiting_answer, S::failed},
    {S::awaiting_answer, S::invalidated},

    {S::complete, S::running},       {S::complete, S::invalidated},
    {S::complete, S::failed},        {S::complete, S::blocked},

    {S::failed, S::pending},         {S::failed, S::invalidated},
    {S::failed, S::complete},

    {S::stopped, S::pending},        {S::stopped, S::invalidated},
};

constexpr std::array<std::array<bool, kCount>, kCount> build_table() {
  std::array<std::array<bool, kCount>, kCount> t{};
  for (const Edge& e : kEdges) t[static_cast<std::size_t>(e.from)][static_cast<std::size_t>(e.to)] = true;
  return t;
}

constexpr auto kTable = build_table();

}  // namespace

bool transition_allowed(LoopStatus from, LoopStatus to) {
  return kTable[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
}

Result<void> check_transition(LoopStatus from, LoopStatus to) {
  if (transition_allowed(from, to)) return ok();
  return make_error(ErrorCode::illegal_transition,
                    std::string("a loop cannot go from ") + to_string(from) + " to " + to_string(to));
}

bool is_terminal(LoopStatus status) {
  return status == S::complete || status == S::failed || status == S::stopped ||
         status == S::invalidated;
}

Result<void> Loop::transition_to(LoopStatus next, std::string reason, EndReason end) {
  LOOPR_TRY(check_transition(status, next));
  status = next;
  status_reason = std::move(reason);
  end_reason = holds_end_reason(next) ? end : EndReason::none;
  return ok();
}

}  // namespace loopr
