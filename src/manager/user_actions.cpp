// What a person asks for through the API: a new plan, the gate (approve, reject, iterate), pause,
// resume and stop of a subtree, and the merge of a complete tree into the base branch. Each
// answers the loop as stored afterwards, or an Error saying why it is not allowed now.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <loopr/api/events.hpp>
#include <loopr/core/commit_message.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/engine/feedback.hpp>

#include "manager/driver.hpp"
#include "manager/pull_request.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {

using engine::first_line;
using engine::transition;

namespace {

void trim_end(std::string& text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
}

Error shutting_down() {
  return make_error(ErrorCode::unsupported, "the daemon is shutting down (start it again)");
}

// Whether `id` has children of its current generation (not invalidated).
bool has_live_children(const std::vector<Loop>& tree, const std::string& id) {
  for (const Loop& l : tree)
    if (l.parent_id == id && l.status != LoopStatus::invalidated) return true;
  return false;
}

// An invalidation (tree_rules) as the one write that stores it; its worktrees to `to_archive`.
WriteSet as_write(Invalidation change, std::vector<std::string>& to_archive) {
  WriteSet w;
  w.updates = std::move(change.updates);
  w.events = std::move(change.events);
  if (change.approval) w.approvals.push_back(std::move(*change.approval));
  to_archive = std::move(change.to_archive);
  return w;
}

// A loop below the plan iterates again (`budget`: the iterations it gets when its own ran out).
// In ONE write: its descendants invalidated when it has children (tree_rules:
// invalidate_descendants), the feedback added, and ancestors that failed only through its
// failure restored (restore_ancestors), so the tree can complete once it does.
void iterate_below_plan(std::vector<Loop>& tree, const Loop& loop, const FeedbackEntry& entry,
                        int budget, WriteSet& w, std::vector<std::string>& to_archive,
                        std::optional<Error>& refused) {
  if (has_live_children(tree, loop.id)) {
    auto change = invalidate_descendants(loop.id, tree, entry.text, LoopStatus::pending);
    if (!change) {
      refused = change.take_error();
      return;
    }
    w = as_write(std::move(*change), to_archive);
  } else {
    Loop l = loop;
    for (const Loop& t : tree)
      if (t.id == loop.id) l = t;
    l.tree.rolled_up = false;
    l.run.no_progress = 0;
    l.run.same_failures = 0;  // the person's feedback starts a new count
    l.run.attended_passed = 0;
    l.run.review_rounds = 0;
    if (!transition(l, LoopStatus::pending, EndReason::none, "iterating with the user's feedback",
                    w.events)) {
      refused = not_allowed(l, "cannot iterate");
      return;
    }
    engine::add_feedback(l.run, entry);
    w.updates.push_back(std::move(l));
  }
  for (Loop& u : w.updates)
    if (u.id == loop.id && u.status == LoopStatus::pending && u.iteration >= u.max_iterations)
      u.max_iterations = u.iteration + budget;
  for (Loop& a : restore_ancestors(loop.id, tree, w.events)) w.updates.push_back(std::move(a));
}

// Descendants of `parent` are stopped and waited for, then invalidated in ONE write with the
// parent's new state (tree_rules: invalidate_descendants), then their worktrees are archived.
// `budget` > 0: the parent is below the plan (iterate_below_plan).
awaitable<ActionResult> invalidate_and_iterate(State s, Loop parent, std::string feedback,
                                               LoopStatus next, int budget = 0) {
  const std::string why = "invalidated: " + parent.id + " iterates again";
  std::vector<std::shared_ptr<Run>> stopping;
  for (const auto& run : s->runs.all()) {
    if (!is_descendant(run->id, parent.id)) continue;
    s->runs.stop(*run, why, EndReason::invalidated);
    stopping.push_back(run);
  }
  co_await wait_for_runs(stopping, std::chrono::seconds(30));

  std::vector<std::string> to_archive;
  auto stored = co_await s->journal.edit_tree(
      parent.plan_id, [&](std::vector<Loop>& tree, WriteSet& w) -> std::optional<Error> {
        to_archive.clear();
        if (budget > 0) {
          std::optional<Error> refused;
          const FeedbackEntry entry{0, FeedbackSource::user, first_line(feedback, 100), feedback};
          iterate_below_plan(tree, parent, entry, budget, w, to_archive, refused);
          return refused;
        }
        auto change = invalidate_descendants(parent.id, tree, feedback, next);
        if (!change) return change.take_error();
        w = as_write(std::move(*change), to_archive);
        return std::nullopt;
      });
  if (!stored) co_return stored.take_error();
  Loop result;
  for (auto& l : stored->loops)
    if (l.id == parent.id) result = l;
  for (const auto& id : to_archive) {
    auto archive = [wt = s->worktrees, id, message = loop_commit_message(id, why)] {
      return wt.archive(id, message);
    };
    auto done = co_await run_blocking(s->ctx.pool, archive);
    if (!done) spdlog::warn("loop {}: archiving its worktree: {}", id, done.error().message);
  }
  co_return result;
}

}  // namespace

std::shared_ptr<const Config> tree_config_of(ManagerState& s, const std::string& plan_id) {
  std::shared_ptr<const Config> config = s.ctx.config;
  auto plan = s.journal.store().get_loop(plan_id);
  return plan ? tree_config(config, plan->tree.budget) : config;
}

std::shared_ptr<const Config> tree_config_of(ManagerState& s, const Loop& loop) {
  if (loop.id != loop.plan_id) return tree_config_of(s, loop.plan_id);
  return tree_config(s.ctx.config, loop.tree.budget);
}

awaitable<ActionResult> submit(State s, std::string request, bool dry_run, RequestBudget budget) {
  trim_end(request);
  if (request.empty())
    co_return make_error(ErrorCode::invalid_argument, "the request is empty (say what to build)");
  if (s->stopping) co_return shutting_down();
  // No plan's lock: the new plan has no step yet, and each submit takes its own number from the
  // store's counter; so a submit never waits for another plan's step (an integration check).
  std::shared_ptr<const Config> config = tree_config(s->ctx.config, budget);
  auto make = [wt = s->worktrees, &journal = s->journal, request, config, dry_run,
               budget]() -> Result<Loop> {
    LOOPR_TRY(wt.check_base(config->base_branch));
    // A plan number whose branches exist already (a store deleted by hand) is skipped.
    std::string id;
    for (int tries = 0; tries < 1000 && id.empty(); ++tries) {
      LOOPR_ASSIGN(int n, journal.next_plan_number());
      LOOPR_ASSIGN(bool taken, wt.plan_branches_exist(plan_id(n)));
      if (!taken && !journal.store().get_loop(plan_id(n))) id = plan_id(n);
    }
    if (id.empty()) return make_error(ErrorCode::internal, "no free plan number");
    Loop plan = make_plan_loop(id, request, *config);
    plan.tree.dry_run = dry_run;
    plan.tree.budget = budget;
    LOOPR_TRY(wt.start_plan(id, config->base_branch));
    LOOPR_ASSIGN(git::PreparedWorktree prepared, wt.prepare(plan, config->base_branch));
    plan.worktree = prepared.worktree;
    plan.branch = prepared.branch;
    return plan;
  };
  auto made = co_await run_blocking(s->ctx.pool, make);
  if (!made) co_return made.take_error();
  WriteSet set;
  set.creates.push_back(*made);
  set.events.push_back(api::encode(
      made->id, api::LoopCreated{LoopType::plan, "", first_line(request, 200), false, dry_run}));
  auto stored = co_await s->journal.commit(std::move(set));
  if (!stored) co_return stored.take_error();
  // While the plan is written: its state is stored apart from the plan's record, which the
  // plan's run writes meanwhile (baseline_state.hpp).
  start_baseline(s, made->id);
  spawn_run(s, made->id);
  co_return std::move(stored->loops.front());
}

awaitable<void> end_dry_run(State s, std::string id) {
  co_await s->journal.edit(id, [](Loop& l, WriteSet& w) -> std::optional<Error> {
    if (l.status != LoopStatus::awaiting_approval || !l.tree.dry_run)
      return not_allowed(l, "it is not a dry run at the gate");
    l.tree.user_rejected = true;  // ended on purpose: no failure policy
    if (!transition(l, LoopStatus::failed, EndReason::dry_run, "dry run", w.events))
      return not_allowed(l, "cannot end");
    return std::nullopt;
  });
}

awaitable<ActionResult> decide(State s, std::string id, bool approve, std::string text) {
  const std::string verb = approve ? "approved" : "rejected";
  auto loaded = co_await s->journal.load(id);
  if (!loaded) co_return loaded.take_error();
  if (loaded->type != LoopType::plan)
    co_return make_error(
        ErrorCode::illegal_transition,
        "loop " + id + " is a " + to_string(loaded->type) + " loop: only plans wait for approval");
  if (loaded->status != LoopStatus::awaiting_approval)
    co_return not_allowed(*loaded, "only a plan awaiting approval can be " + verb);
  const std::string reason =
      approve ? "approved by the user" : "rejected by the user" + (text.empty() ? "" : ": " + text);
  const std::string decision = approve ? "approve" : "reject";
  // The record just read is the one edited (issue 44 R4: an approval reads its plan twice).
  auto edit = [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    if (!transition(l, approve ? LoopStatus::complete : LoopStatus::failed,
                    approve ? EndReason::approved : EndReason::rejected, reason, w.events))
      return not_allowed(l, "only a plan awaiting approval can be " + verb);
    if (!approve) l.tree.user_rejected = true;
    if (approve) l.tree.runtime_from = now_ms();  // limits.max_runtime counts from here
    w.events.push_back(api::encode(id, api::ApprovalEvent{decision, text}));
    w.approvals.push_back(Approval{id, decision, text, now_ms()});
    return std::nullopt;
  };
  auto stored = co_await s->journal.edit(std::move(*loaded), edit);
  // Its completion starts from the record as stored, not read again.
  if (stored && approve) net::co_spawn(s->ctx.io, after_run(s, *stored), net::detached);
  co_return stored;
}

namespace {

// What a person may resume or give feedback to.
bool resumable(LoopStatus st) {
  return st == LoopStatus::paused || st == LoopStatus::stopped || st == LoopStatus::blocked;
}

// A run that has stored its loop stopped, paused or blocked is still in the run table for a few
// io steps (run_loop: `done`, then the table forgets it): an action on the loop in that window
// waits for it to go instead of taking the loop for one that runs. Bounded: a run stuck there is
// a bug, and the action then answers as before.
awaitable<void> wait_for_run_end(State s, std::shared_ptr<Run> run) {
  co_await run->done.wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(10));
  co_await net::post(s->ctx.io, net::use_awaitable);  // `done` is set just before the forget
}

}  // namespace

awaitable<ActionResult> iterate(State s, std::string id, std::string feedback) {
  trim_end(feedback);
  if (feedback.empty())
    co_return make_error(ErrorCode::invalid_argument, "the feedback is empty (say what to change)");
  auto guard = co_await s->plan_locks.lock(root_plan_id(id));
  auto loaded = co_await s->journal.load(id);
  if (!loaded) co_return loaded.take_error();
  const Loop loop = std::move(*loaded);
  if (auto run = s->runs.find(id); run && resumable(loop.status)) co_await wait_for_run_end(s, run);
  if (s->runs.has(id)) co_return not_allowed(loop, "it is running (pause or stop it first)");
  const FeedbackEntry entry{0, FeedbackSource::user, first_line(feedback, 100), feedback};
  ActionResult result = loop;
  if (loop.type == LoopType::plan && loop.status == LoopStatus::awaiting_approval) {
    result = co_await s->journal.edit(id, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
      if (!transition(l, LoopStatus::running, EndReason::none, "iterating with the user's feedback",
                      w.events))
        return not_allowed(l, "cannot iterate");
      engine::add_feedback(l.run, entry);
      l.tree.runtime_from = now_ms();  // the wait at the gate was the person's time
      // The person asked for more work: a plan at its last iteration gets another budget (the
      // request's --max-iterations when it gave one), as every other iterate does.
      if (l.iteration >= l.max_iterations)
        l.max_iterations =
            l.iteration +
            std::max(
                1, with_budget(*s->ctx.config, l.tree.budget).loop(LoopType::plan).max_iterations);
      w.events.push_back(api::encode(l.id, api::ApprovalEvent{"iterate", feedback}));
      w.approvals.push_back(Approval{id, "iterate", feedback, now_ms()});
      return std::nullopt;
    });
  } else if (loop.type == LoopType::plan &&
             (loop.status == LoopStatus::complete || loop.status == LoopStatus::failed ||
              gate_blocked(loop))) {
    LoopStatus next = loop.status == LoopStatus::failed ? LoopStatus::pending : LoopStatus::running;
    result = co_await invalidate_and_iterate(s, loop, feedback, next);
  } else if (loop.status == LoopStatus::failed || loop.status == LoopStatus::stopped ||
             loop.status == LoopStatus::paused || loop.status == LoopStatus::blocked) {
    // Its children (a spec or phase that had some) are invalidated like a plan's, and ancestors
    // its failure rolled up to are restored: the tree can always complete after this.
    // The request's --max-iterations, when it gave one, else the config's (iterate keeps it).
    std::shared_ptr<const Config> tree =
        co_await run_blocking(s->ctx.pool, [&] { return tree_config_of(*s, loop.plan_id); });
    const int budget = std::max(1, tree->loop(loop.type).max_iterations);
    result = co_await invalidate_and_iterate(s, loop, feedback, LoopStatus::pending, budget);
  } else {
    co_return not_allowed(loop, loop.status == LoopStatus::complete
                                    ? "a completed " + std::string(to_string(loop.type)) +
                                          " loop cannot iterate on its own (iterate its plan)"
                                    : "it cannot take feedback now");
  }
  if (result) spawn_run(s, id);
  co_return result;
}

awaitable<ActionResult> pause(State s, std::string id) {
  auto loaded = co_await s->journal.load(id);
  if (!loaded) co_return loaded.take_error();
  std::size_t acted = 0;
  auto stored = co_await s->journal.edit_tree(
      loaded->plan_id, [&](std::vector<Loop>& tree, WriteSet& w) -> std::optional<Error> {
        acted = 0;
        for (Loop& l : tree) {
          if (!in_subtree(l.id, id)) continue;
          auto run = s->runs.find(l.id);
          // An iterating run pauses at its next boundary and stores that itself.
          if (run && run->slot->granted) {
            s->runs.pause(*run);
            ++acted;
            continue;
          }
          // A loop waiting for an answer is paused too: answered, it stays paused until resume.
          if (l.status != LoopStatus::pending && l.status != LoopStatus::awaiting_answer) continue;
          if (run) s->runs.pause(*run);  // waiting for a slot: woken without one, before the write
          if (transition(l, LoopStatus::paused, EndReason::paused_by_user, "paused by the user",
                         w.events)) {
            w.updates.push_back(l);
            ++acted;
          }
        }
        if (acted == 0)
          return not_allowed(*loaded,
                             "neither it nor its descendants are running or waiting to run");
        return std::nullopt;
      });
  if (!stored) co_return stored.take_error();
  s->paused_roots.insert(id);
  co_return co_await s->journal.load(id);
}

namespace {

// `resume --max-cost/--max-runtime`: the plan of `tree` gets the new caps (stored by the caller's
// write); an error for a cost cap the tree already spent.
std::optional<Error> raise_caps(std::vector<Loop>& tree, const std::string& plan_id,
                                const RequestBudget& raised, bool& changed) {
  if (raised.max_cost_usd <= 0 && raised.max_runtime.count() <= 0) return std::nullopt;
  double spent = 0;
  for (const Loop& l : tree) spent += l.usage.cost_usd;
  if (raised.max_cost_usd > 0 && raised.max_cost_usd <= spent) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "the tree has spent $%.2f: a cost limit of $%.2f would stop it again (give more)",
                  spent, raised.max_cost_usd);
    return Error{ErrorCode::invalid_argument, buf};
  }
  for (Loop& l : tree) {
    if (l.id != plan_id) continue;
    if (raised.max_cost_usd > 0) l.tree.budget.max_cost_usd = raised.max_cost_usd;
    if (raised.max_runtime.count() > 0) l.tree.budget.max_runtime = raised.max_runtime;
    changed = true;
  }
  return std::nullopt;
}

}  // namespace

awaitable<ActionResult> resume(State s, std::string id, RequestBudget raised) {
  auto loaded = co_await s->journal.load(id);
  if (!loaded) co_return loaded.take_error();
  if (s->stopping) co_return shutting_down();
  if (loaded->type == LoopType::plan && loaded->status == LoopStatus::blocked &&
      loaded->tree.tree_complete)
    co_return not_allowed(*loaded, "its tree is complete and waits for `loopr merge " + id + "`");
  if (baseline_blocked(*loaded)) {
    auto guard = co_await s->plan_locks.lock(id);
    co_return co_await resume_baseline(s, *loaded);
  }
  if (gate_blocked(*loaded)) {
    // The person fixed the integration branch (or wants another fix loop): check it again.
    auto guard = co_await s->plan_locks.lock(id);
    auto reopened = co_await reopen_gate(
        *s, id, GateResult::none, "resumed by the user: the integration branch is checked again",
        false);
    if (!reopened) co_return reopened.take_error();
    net::co_spawn(s->ctx.io, finish_loop(s, id), net::detached);
    co_return *reopened;
  }
  std::vector<std::string> start;
  // Runs of the subtree that have stored their loop resumable are leaving the table: the edit is
  // given up, they are waited for (wait_for_run_end) and it is made again.
  std::vector<std::shared_ptr<Run>> ending;
  const Error wait_for_ending{ErrorCode::conflict, "runs of the subtree are ending"};
  Result<WriteResult> stored = wait_for_ending;
  for (int attempt = 0; attempt < 4; ++attempt) {
    ending.clear();
    stored = co_await s->journal.edit_tree(
      loaded->plan_id, [&](std::vector<Loop>& tree, WriteSet& w) -> std::optional<Error> {
        start.clear();
        ending.clear();
        bool raised_caps = false;
        if (auto refused = raise_caps(tree, loaded->plan_id, raised, raised_caps)) return refused;
        for (Loop& l : tree) {
          if (!in_subtree(l.id, id)) continue;
          if (auto run = s->runs.find(l.id)) {
            if (resumable(l.status) && !run->done.is_set()) ending.push_back(run);
            continue;
          }
          if (l.status == LoopStatus::paused || l.status == LoopStatus::stopped ||
              l.status == LoopStatus::blocked) {
            if (transition(l, LoopStatus::pending, EndReason::none, "resumed by the user",
                           w.events)) {
              w.updates.push_back(l);
              start.push_back(l.id);
            }
          } else if (l.status == LoopStatus::pending || l.status == LoopStatus::running) {
            start.push_back(l.id);
          }
        }
        if (raised_caps && std::none_of(w.updates.begin(), w.updates.end(),
                                        [&](const Loop& u) { return u.id == loaded->plan_id; }))
          for (const Loop& l : tree)
            if (l.id == loaded->plan_id) w.updates.push_back(l);
        if (!ending.empty() && attempt < 3) return wait_for_ending;
        if (start.empty())
          return not_allowed(*loaded,
                             "neither it nor its descendants are paused, stopped or blocked");
        return std::nullopt;
      });
    if (ending.empty() || attempt >= 3) break;
    for (const auto& run : ending) co_await wait_for_run_end(s, run);
  }
  std::erase_if(s->paused_roots, [&](const std::string& root) { return in_subtree(root, id); });
  if (!stored) co_return stored.take_error();
  for (const auto& lid : start) spawn_run(s, lid);
  co_return co_await s->journal.load(id);
}

awaitable<ActionResult> stop(State s, std::string id) {
  auto loaded = co_await s->journal.load(id);
  if (!loaded) co_return loaded.take_error();
  std::size_t acted = co_await stop_subtree(*s, loaded->plan_id, id, "stopped by the user",
                                            EndReason::stopped_by_user, true);
  if (acted == 0) co_return not_allowed(*loaded, "neither it nor its descendants are active");
  co_return co_await s->journal.load(id);
}

namespace {

Error red_tip(const Loop& plan) {
  return make_error(
      ErrorCode::illegal_transition,
      "plan " + plan.id + "'s integration branch fails its tests: " + plan.tree.gate_summary +
          " (fix it there and `loopr resume " + plan.id + "`, see `loopr show " + plan.id +
          "`, or `loopr merge --force " + plan.id + "` to merge it anyway)");
}

}  // namespace

awaitable<Result<MergeInfo>> merge(State s, std::string plan, bool force) {
  auto loaded = co_await s->journal.load(plan);
  if (!loaded) co_return loaded.take_error();
  if (loaded->type != LoopType::plan)
    co_return make_error(ErrorCode::invalid_argument,
                         loaded->id + " is not a plan (give a plan id such as 001)");
  auto guard = co_await s->plan_locks.lock(plan);
  auto fresh = co_await s->journal.load(plan);
  if (!fresh) co_return fresh.take_error();
  if (const std::string& sha = fresh->tree.merged_into_base; !sha.empty())
    co_return make_error(ErrorCode::illegal_transition,
                         "plan " + plan + " is already merged into " + s->ctx.config->base_branch +
                             " at " + sha.substr(0, 12));
  // merge: pr: the push and the pull request again (a failure, a hold, CI the person fixed);
  // the base branch is the team's to merge into, through the PR.
  if (s->ctx.config->merge == MergeMode::pr && !gate_blocked(*fresh))
    co_return co_await retry_pr(s, plan);
  auto tip_of = [wt = s->worktrees, plan] { return wt.integration_tip(plan); };
  if (gate_blocked(*fresh)) {
    if (!force) {
      auto tip = co_await run_blocking(s->ctx.pool, tip_of);
      if (!tip) co_return tip.take_error();
      if (*tip == fresh->tree.gate_sha) co_return red_tip(*fresh);
      auto passed = co_await check_tip_now(*s, plan);  // fixed by hand since: check it now
      if (!passed) co_return passed.take_error();
      if (!*passed) {
        auto again = co_await s->journal.load(plan);
        co_return red_tip(again ? *again : *fresh);
      }
    }
    auto reopened = co_await reopen_gate(
        *s, plan, force ? GateResult::forced : GateResult::passed,
        force ? "merged by the user although its integration branch fails (--force)"
              : "merged by the user: the integration branch passes now",
        true);
    if (!reopened) co_return reopened.take_error();
    if (s->ctx.config->merge == MergeMode::pr) co_return co_await retry_pr(s, plan);
    co_return co_await merge_into_base(*s, plan);
  }
  if (!fresh->tree.tree_complete) {
    auto loops = co_await s->journal.tree(plan);
    std::size_t total = 0, complete = 0;
    if (loops)
      for (const auto& l : *loops) {
        if (l.status == LoopStatus::invalidated) continue;
        ++total;
        complete += l.status == LoopStatus::complete;
      }
    co_return make_error(ErrorCode::illegal_transition,
                         "plan " + plan + " is not complete yet (" + std::to_string(complete) +
                             " of " + std::to_string(total) + " loops complete)");
  }
  if (!force) {
    // Commits made on the integration branch after the gate passed are checked first.
    auto tip = co_await run_blocking(s->ctx.pool, tip_of);
    if (!tip) co_return tip.take_error();
    if (*tip != fresh->tree.gate_sha) {
      auto passed = co_await check_tip_now(*s, plan);
      if (!passed) co_return passed.take_error();
      if (!*passed) {
        auto again = co_await s->journal.load(plan);
        co_return red_tip(again ? *again : *fresh);
      }
    }
  }
  auto merged = co_await merge_into_base(*s, plan);
  if (merged && fresh->status == LoopStatus::blocked) {
    // A plan held back for review (it changed held files): the person merged it.
    co_await s->journal.edit(plan, [](Loop& l, WriteSet& w) -> std::optional<Error> {
      l.tree.conflicts.clear();
      if (!transition(l, LoopStatus::complete, EndReason::merged_by_user,
                      "merged by the user after review", w.events))
        return not_allowed(l, "cannot complete");
      return std::nullopt;
    });
  }
  co_return merged;
}

}  // namespace loopr::manager
