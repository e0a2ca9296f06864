// A complete loop: its work is merged into the plan's integration branch, the children its
// artifact asks for are created (in ONE write with `spawned_iteration`), its worktree is retired,
// and when the whole tree is finished it is marked complete and merged into the base branch.
// Each step checks the loop's marks first, so doing it again (after a crash, twice) does nothing
// twice: a merge made before is `up_to_date`, child ids come from the parent's id and the index.
#include <spdlog/spdlog.h>

#include <loopr/api/events.hpp>
#include <loopr/core/commit_message.hpp>
#include <loopr/core/crash_point.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/core/merge_policy.hpp>
#include <loopr/core/protected_paths.hpp>
#include <loopr/engine/code_check.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/git/branches.hpp>

#include "manager/driver.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {

using engine::first_line;

namespace {

// A code loop whose work had to be rebased onto a moved integration tip at merge time: its
// validation runs again in its worktree before the merge. True when it passes; otherwise the loop
// goes back to running with the output in its feedback (and has at least one more iteration).
awaitable<bool> revalidate_rebased(State state, Loop& loop) {
  ManagerState& s = *state;
  engine::CodeCheckRequest request;
  request.command = loop.validation_command.empty() ? s.ctx.config->loop(LoopType::code).validation
                                                    : loop.validation_command;
  request.workdir = loop.worktree;
  request.env = {
      {"LOOPR_LOOP_ID", loop.id}, {"LOOPR_LOOP_TYPE", "code"}, {"LOOPR_PLAN_ID", loop.plan_id}};
  request.cancel = &s.gate_cancel;
  engine::CodeCheck check = co_await engine::run_code_check(s.ctx, std::move(request));
  if (check.passed) {
    std::vector<Event> events;
    events.push_back(api::encode(loop.id, api::Revalidated{true, check.summary}));
    co_await s.journal.note(std::move(events));
    co_return true;
  }
  if (check.stopped) co_return false;  // the daemon stops: recovery merges it again
  std::shared_ptr<const Config> tree =
      co_await run_blocking(s.ctx.pool, [&] { return tree_config_of(s, loop.plan_id); });
  const int budget = tree->loop(LoopType::code).max_iterations;
  auto stored = co_await s.journal.edit(loop.id, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    w.events.push_back(api::encode(l.id, api::Revalidated{false, check.summary}));
    engine::add_feedback(l.run, FeedbackEntry{l.iteration, FeedbackSource::rebase,
                                              "rebased onto the integration branch at merge "
                                              "time, then: " +
                                                  first_line(check.summary, 100),
                                              "Your work was rebased onto the integration branch "
                                              "(other loops' work landed there) and then failed "
                                              "its validation. " +
                                                  check.feedback});
    if (l.iteration >= l.max_iterations) l.max_iterations = l.iteration + std::max(1, budget / 2);
    if (!engine::transition(l, LoopStatus::running, EndReason::none,
                            "its validation fails after a rebase at merge time", w.events))
      return not_allowed(l, "cannot run again");
    return std::nullopt;
  });
  if (stored) spawn_run(state, loop.id);
  co_return false;
}

// The loop's committed work has what the merge policy refuses outright (a symlink out of the
// repository, a control character in a name, a file past its size limit): nothing of it is
// merged, and the loop waits for the person.
awaitable<void> refuse_work(ManagerState& s, const Loop& loop, const std::string& into,
                            const std::vector<HeldPath>& refused) {
  std::string problem = "its work is not merged into " + into + ": " + describe_held(refused) +
                        " (remove them from its branch " + git::loop_branch(loop.plan_id, loop.id) +
                        ", then `loopr resume " + loop.id + "`)";
  spdlog::warn("loop {}: {}", loop.id, problem);
  co_await s.journal.edit(loop.id, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    l.tree.conflicts.clear();
    for (const HeldPath& h : refused) l.tree.conflicts.push_back(h.path);
    w.events.push_back(api::encode(l.id, api::MergeFailed{into, problem}));
    if (!engine::transition(l, LoopStatus::blocked, EndReason::held_for_review, problem, w.events))
      return not_allowed(l, "cannot block");
    return std::nullopt;
  });
}

awaitable<bool> merge_into_integration(State state, Loop& loop) {
  ManagerState& s = *state;
  const std::string integration = git::integration_branch(loop.plan_id);
  // A plan merges a new generation of children into a fresh integration branch, so nothing of
  // an invalidated generation reaches the result.
  const int generation = loop.tree.children_base;
  const bool rebuild =
      loop.type == LoopType::plan && loop.tree.integration_generation != generation;
  std::string message = loop_commit_message(
      loop.id, std::string("merge ") + to_string(loop.type) + " " + loop.id + " (iteration " +
                   std::to_string(loop.iteration) + ") into " + integration);
  // A code loop rebased at merge time is validated again before it is merged.
  const bool revalidate = loop.type == LoopType::code;
  MergeRules rules = merge_rules(*s.ctx.config);
  auto work = [wt = s.worktrees, loop, rebuild, base = s.ctx.config->base_branch, message,
               revalidate, rules] {
    return wt.merge_into_integration(loop, rebuild, base, message, !revalidate, rules);
  };
  auto out = co_await run_blocking(s.ctx.pool, work);
  if (out && !out->refused.empty()) {
    co_await refuse_work(s, loop, integration, out->refused);
    co_return false;
  }
  if (out && out->rebased_unmerged) {
    bool passed = co_await revalidate_rebased(state, loop);
    if (!passed) co_return false;
    auto again = [wt = s.worktrees, loop, base = s.ctx.config->base_branch, message] {
      return wt.merge_into_integration(loop, false, base, message, true);
    };
    out = co_await run_blocking(s.ctx.pool, again);
  }
  if (!out) {
    spdlog::error("loop {}: merging into {} failed: {}", loop.id, integration, out.error().message);
    WriteSet set;
    set.events = {api::encode(loop.id, api::MergeFailed{integration, out.error().message})};
    co_await s.journal.commit(std::move(set));
    co_return false;
  }
  using K = git::MergeOutcome::Kind;
  if (out->merge.kind == K::conflict || out->merge.kind == K::local_changes) {
    std::string why = "its merge into " + integration + " conflicts in " +
                      join(out->conflicts, ", ") +
                      " (resolve it in its worktree, commit, then `loopr resume " + loop.id + "`)";
    co_await s.journal.edit(loop.id, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
      l.tree.conflicts = out->conflicts;
      w.events.push_back(api::encode(l.id, api::RebaseConflict{integration, out->conflicts}));
      if (!engine::transition(l, LoopStatus::blocked, EndReason::merge_conflict, why, w.events))
        return not_allowed(l, "cannot block");
      return std::nullopt;
    });
    co_return false;
  }
  crash_point("integration-merged");  // git has the merge, the store not yet
  const std::string sha = out->merge.sha;
  auto stored = co_await s.journal.edit(loop, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    l.tree.merged_iteration = l.iteration;
    l.tree.merged_sha = sha;
    l.tree.based_on = sha;
    if (rebuild) l.tree.integration_generation = generation;
    w.events.push_back(api::encode(
        l.id, api::Merged{integration, sha, std::string(git::to_string(out->merge.kind))}));
    return std::nullopt;
  });
  if (!stored) co_return false;
  loop = std::move(*stored);
  s.runs.notify_integration_moved(loop.plan_id, loop.id);
  co_return true;
}

// Removes a complete loop's worktree folder (its work is in the integration branch; its branch
// stays). True when the folder is gone: the caller's next write clears the record's path.
awaitable<bool> retire_folder(ManagerState& s, const Loop& loop) {
  auto retire = [wt = s.worktrees, lid = loop.id] { return wt.retire(lid); };
  auto removed = co_await run_blocking(s.ctx.pool, retire);
  crash_point("worktree-retired");  // its folder is gone, the record still names it
  if (removed || removed.error().code == ErrorCode::not_found) co_return true;
  spdlog::warn("loop {}: its worktree stays: {}", loop.id, removed.error().message);
  co_return false;
}

// `retired`: the parent's folder is gone, and the write that stores the children clears its
// path (one write for both).
awaitable<bool> spawn_children(State s, Loop& parent, bool retired) {
  auto read = [wt = s->worktrees, parent, &state = *s]() -> Result<std::vector<Loop>> {
    // The tree's config: a request's --max-iterations holds for every loop of its tree.
    std::shared_ptr<const Config> config = tree_config_of(state, parent);
    LOOPR_ASSIGN(std::string text, wt.read_artifact(parent, config->artifacts.max_bytes));
    return children_from_artifact(parent, text, *config);
  };
  auto wanted = co_await run_blocking(s->ctx.pool, read);
  if (!wanted) {
    // The artifact passed validation when the loop completed, so this is the file system or git
    // failing; the loop fails with the reason rather than sit complete without children.
    std::string why = "its children could not be spawned: " + wanted.error().message;
    spdlog::error("loop {}: {}", parent.id, why);
    co_await s->journal.edit(parent, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
      if (!engine::transition(l, LoopStatus::failed, EndReason::internal_error, why, w.events))
        return not_allowed(l, "cannot fail");
      if (retired) l.worktree.clear();
      return std::nullopt;
    });
    co_return false;
  }
  // The children stored before (a spawn redone after a crash), read in one pool hop.
  auto read_existing = [&journal = s->journal, ids = *wanted] {
    std::map<std::string, Loop> found;
    for (const Loop& c : ids)
      if (auto have = journal.store().get_loop(c.id)) found.emplace(c.id, std::move(*have));
    return found;
  };
  std::map<std::string, Loop> existing = co_await run_blocking(s->ctx.pool, read_existing);
  auto stored =
      co_await s->journal.edit(parent, [&](Loop& p, WriteSet& w) -> std::optional<Error> {
        for (const Loop& c : *wanted) {
          if (existing.count(c.id)) continue;
          w.creates.push_back(c);
          w.events.push_back(api::encode(
              c.id, api::LoopCreated{c.type, c.parent_id, first_line(c.task, 200), false, false}));
        }
        p.tree.spawned_iteration = p.iteration;
        if (retired) p.worktree.clear();
        return std::nullopt;
      });
  if (!stored) {
    spdlog::error("loop {}: storing its children failed: {}", parent.id, stored.error().message);
    co_return false;
  }
  parent = std::move(*stored);
  for (const Loop& c : *wanted) {
    auto have = existing.find(c.id);
    LoopStatus status = have == existing.end() ? c.status : have->second.status;
    if (status != LoopStatus::pending && status != LoopStatus::running) continue;
    if (s->under_paused_root(c.id)) {
      co_await s->journal.edit(c.id, [](Loop& l, WriteSet& w) -> std::optional<Error> {
        if (!engine::transition(l, LoopStatus::paused, EndReason::paused_by_user,
                                "paused by the user (its ancestor is paused)", w.events))
          return not_allowed(l, "cannot pause");
        return std::nullopt;
      });
      continue;
    }
    spawn_run(s, c.id);
  }
  co_return true;
}

// Every loop of the tree finished: the integration gate checks its tip, then the tree is marked
// complete and merged into the base branch (`merge: auto`) or left to `loopr merge` (`manual`).
awaitable<void> check_tree(State state, std::string plan) {
  ManagerState& s = *state;
  // A loop of this tree still has a run: it is not finished, and that run's end checks again.
  // Skipping the read here keeps a tree of 1,000 code loops from decoding the whole tree at each
  // of its 1,000 completions.
  if (s.runs.any_of_plan(plan)) co_return;
  // Another completion of this tree waits for the plan's lock: it checks after its own merge.
  if (s.plan_locks.completions(plan) > 1) co_return;
  auto loops = co_await s.journal.tree(plan);
  if (!loops) co_return;
  const MergeMode mode = s.ctx.config->merge;
  TreeStep step = next_tree_step(*loops, plan, mode);
  if (step == TreeStep::check_integration) co_await check_integration(state, plan);
  if (step == TreeStep::merge_into_base) co_await auto_merge_into_base(s, plan);
}

}  // namespace

awaitable<void> on_complete(State s, std::string id) {
  const std::string plan = root_plan_id(id);
  auto guard = co_await s->plan_locks.lock_for_completion(plan);
  // Read once, under the lock; each step then passes this record along and stores from it
  // (journal.edit(Loop, …): read again only when someone wrote the loop meanwhile).
  auto loaded = co_await s->journal.load(id);
  if (!loaded || loaded->status != LoopStatus::complete) co_return;
  Loop loop = std::move(*loaded);
  if (!merged(loop)) {
    bool ok = co_await merge_into_integration(s, loop);
    if (!ok) co_return;
  }
  if (loop.type == LoopType::plan && !spawned(loop)) {
    bool ready = co_await baseline_ready(s, loop);
    if (!ready) co_return;
  }
  // Its work is in the integration branch now: the folder goes, the branch stays. Before the
  // children are made, so that their write also clears the path (the artifact is then read
  // from the loop's branch).
  const bool retired = !loop.worktree.empty() && co_await retire_folder(*s, loop);
  if (!spawned(loop)) {
    bool ok = co_await spawn_children(s, loop, retired);
    if (!ok) co_return;
  } else if (retired) {
    co_await s->journal.edit(loop, [](Loop& l, WriteSet&) -> std::optional<Error> {
      l.worktree.clear();
      return std::nullopt;
    });
  }
  co_await check_tree(s, loop.plan_id);
}

// The plan as the person approved it: the tests it names may change (a phase's `- Files:` is
// the model's word). Read from the plan's branch at its merged iteration; "" when unreadable.
awaitable<std::string> approved_plan_text(ManagerState& s, const std::string& plan) {
  auto loaded = co_await s.journal.load(plan);
  if (!loaded) co_return std::string();
  auto read = [wt = s.worktrees, l = *loaded, max = s.ctx.config->artifacts.max_bytes] {
    return wt.read_artifact(l, max);
  };
  auto text = co_await run_blocking(s.ctx.pool, read);
  co_return text ? *text : std::string();
}

awaitable<void> auto_merge_into_base(ManagerState& s, std::string plan) {
  const std::string base = s.ctx.config->base_branch;
  MergeRules rules = merge_rules(*s.ctx.config);
  rules.approved_plan = co_await approved_plan_text(s, plan);
  auto check = [wt = s.worktrees, plan, base, rules] { return wt.held_changes(plan, base, rules); };
  auto held = co_await run_blocking(s.ctx.pool, check);
  if (held && held->empty()) {
    co_await merge_into_base(s, plan);
    co_return;
  }
  // The model may have changed loopr itself (its settings, its prompts), what decides whether
  // tests pass, or what other tools run on their own: a person looks first.
  std::string problem =
      held ? "its changes touch files held for your review: " + describe_held(*held) +
                 " (review them with `git diff " + base + "..." + git::integration_branch(plan) +
                 "`, then `loopr merge " + plan + "`)"
           : "cannot tell which files it changes: " + held.error().message + " (`loopr merge " +
                 plan + "` merges it)";
  spdlog::warn("plan {} is not merged into {} automatically: {}", plan, base, problem);
  co_await s.journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    l.tree.merge_error = problem;
    if (held) {
      l.tree.conflicts.clear();
      for (const HeldPath& h : *held) l.tree.conflicts.push_back(h.path);
    }
    w.events.push_back(api::encode(l.id, api::MergeFailed{base, problem}));
    if (!engine::transition(l, LoopStatus::blocked, EndReason::held_for_review, problem, w.events))
      return not_allowed(l, "cannot block");
    return std::nullopt;
  });
}

awaitable<Result<MergeInfo>> merge_into_base(ManagerState& s, std::string plan) {
  auto loaded = co_await s.journal.load(plan);
  if (!loaded) co_return loaded.take_error();
  const std::string base = s.ctx.config->base_branch;
  std::string message =
      loop_commit_message(plan, "merge plan " + plan + ": " + first_line(loaded->task, 60));
  // What is refused outright never enters the base branch, not even by `loopr merge`.
  MergeRules rules = merge_rules(*s.ctx.config);
  rules.tree = false;
  auto refusal = [wt = s.worktrees, plan, base, rules] {
    return wt.held_changes(plan, base, rules);
  };
  auto refused = co_await run_blocking(s.ctx.pool, refusal);
  auto work = [wt = s.worktrees, plan, base, message] {
    return wt.merge_plan_into_base(plan, base, message);
  };
  Result<git::MergeOutcome> out = make_error(ErrorCode::io, "not merged");
  if (!refused)
    out = refused.take_error();
  else if (!refused->empty())
    out =
        make_error(ErrorCode::conflict, "it has what is never merged: " + describe_held(*refused));
  else
    out = co_await run_blocking(s.ctx.pool, work);
  using K = git::MergeOutcome::Kind;
  std::string problem;
  if (!out)
    problem = out.error().message;
  else if (out->kind == K::conflict)
    problem = "it conflicts with " + base + " in " + join(out->conflicts, ", ");
  else if (out->kind == K::local_changes)
    problem =
        "uncommitted changes in your work tree would be overwritten: " + join(out->conflicts, ", ");
  if (!problem.empty()) {
    std::string msg = "plan " + plan + " cannot be merged into " + base + ": " + problem;
    co_await s.journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
      l.tree.merge_error = problem;
      w.events.push_back(api::encode(l.id, api::MergeFailed{base, problem}));
      return std::nullopt;
    });
    co_return make_error(ErrorCode::conflict,
                         msg + " (resolve it, then `loopr merge " + plan + "`)");
  }
  crash_point("base-merged");  // the base branch has the merge, the store not yet
  const std::string sha = out->sha;
  co_await s.journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    l.tree.merged_into_base = sha;
    l.tree.merge_error.clear();
    w.events.push_back(
        api::encode(l.id, api::Merged{base, sha, std::string(git::to_string(out->kind))}));
    return std::nullopt;
  });
  co_return MergeInfo{plan, base, sha, 0, {}, {}};
}

}  // namespace loopr::manager
