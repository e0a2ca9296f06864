// The integration gate (src/manager/README.md): when every loop of a tree is finished, the code
// validation command runs on the plan's integration tip in a worktree of its own, through the
// same executor as every other command. Only a passing tip marks the tree complete (and is merged
// into the base branch with `merge: auto`, or offered to `loopr merge`). A failing tip gets one
// integration fix loop (`fix-<plan>-NNN`, a code loop on the integration branch); when that
// cannot make it pass, or the tip fails again, the plan is `blocked` with the output until a
// person resumes, merges (`--force` for a red tip) or iterates it.
#include <spdlog/spdlog.h>

#include <fstream>

#include <loopr/api/events.hpp>
#include <loopr/core/crash_point.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/engine/code_check.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/engine/worktree_setup.hpp>
#include <loopr/git/branches.hpp>

#include "manager/driver.hpp"
#include "manager/pull_request.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {

using engine::first_line;

namespace {

std::string what_to_do(const std::string& plan) {
  return "fix it on branch " + git::integration_branch(plan) + " and run `loopr resume " + plan +
         "`, merge it as it is with `loopr merge --force " + plan + "`, or `loopr iterate " + plan +
         " \"…\"`";
}

Event check_event(const std::string& plan, const GateRun& g) {
  return api::encode(
      plan, api::IntegrationCheck{g.sha, g.check.passed, g.check.command, g.check.exit_code,
                                  g.check.summary, g.check.duration_ms, g.log});
}

void record(Loop& plan, const GateRun& g) {
  plan.tree.gate_sha = g.sha;
  plan.tree.gate_result = g.check.passed ? GateResult::passed : GateResult::failed;
  plan.tree.gate_summary = g.check.summary;
  plan.tree.gate_output = gate_output_tail(g.check.output);
  plan.tree.gate_log = g.log;
}

// Every code loop whose work is in the integration branch (for the fix loop's prompt).
std::vector<std::string> merged_loops(const std::vector<Loop>& tree) {
  std::vector<std::string> out;
  for (const Loop& l : tree)
    if (l.type == LoopType::code && l.status == LoopStatus::complete)
      out.push_back(l.id + " (" + first_line(l.task, 80) + ")");
  return out;
}

awaitable<void> mark_complete_and_merge(ManagerState& s, const std::string& plan,
                                        std::vector<Event> events,
                                        std::function<void(Loop&)> also) {
  auto stored = co_await s.journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    if (also) also(l);
    l.tree.tree_complete = true;
    w.events = events;
    w.events.push_back(api::encode(l.id, api::TreeComplete{}));
    return std::nullopt;
  });
  crash_point("tree-complete");  // stored complete, not merged into the base yet
  if (stored && s.ctx.config->merge == MergeMode::automatic) co_await auto_merge_into_base(s, plan);
}

}  // namespace

awaitable<GateRun> run_gate(ManagerState& s, std::string plan) {
  GateRun g;
  auto prepare = [wt = s.worktrees, plan] { return wt.prepare_gate(plan); };
  auto checkout = co_await run_blocking(s.ctx.pool, prepare);
  if (!checkout) {
    g.error = "its integration branch cannot be checked out: " + checkout.error().message;
    co_return g;
  }
  g.sha = checkout->sha;
  crash_point("gate-worktree");  // the gate's worktree is on disk, its check not run
  // A fresh worktree: the project's `setup:` first, as in a code loop's.
  engine::SetupRequest setup_request;
  setup_request.workdir = checkout->worktree;
  setup_request.env = {
      {"LOOPR_PLAN_ID", plan}, {"LOOPR_LOOP_ID", plan}, {"LOOPR_LOOP_TYPE", "integration"}};
  setup_request.cancel = &s.gate_cancel;
  engine::SetupRun setup = co_await engine::run_setup(s.ctx, std::move(setup_request));
  if (!setup.passed) {
    // Not the merged code's failure: no fix loop; the plan is blocked with the setup's output.
    g.check.passed = false;
    g.check.stopped = setup.stopped;
    g.check.command = setup.command;
    g.check.summary = setup.summary;
    g.check.output = setup.output;
    if (!setup.stopped)
      g.error = "its setup failed in the integration check's worktree: " + setup.summary;
  }
  engine::CodeCheckRequest request;
  request.command = s.ctx.config->loop(LoopType::code).validation;
  request.workdir = checkout->worktree;
  request.env = {
      {"LOOPR_PLAN_ID", plan}, {"LOOPR_LOOP_ID", plan}, {"LOOPR_LOOP_TYPE", "integration"}};
  request.cancel = &s.gate_cancel;
  if (setup.passed) g.check = co_await engine::run_code_check(s.ctx, std::move(request));
  auto finish = [wt = s.worktrees, plan, paths = s.ctx.paths, sha = g.sha, check = g.check] {
    if (auto removed = wt.remove_gate(plan); !removed)
      spdlog::warn("plan {}: the integration check's worktree stays: {}", plan,
                   removed.error().message);
    return write_plan_log(
        paths, plan, "integration", sha,
        "$ " + check.command + "\n" + check.output + "\n# " + check.summary + "\n");
  };
  g.log = co_await run_blocking(s.ctx.pool, finish);
  co_return g;
}

namespace {

// The tip passed: record it, then the pull request or the merge.
awaitable<void> on_gate_passed(State s, std::string plan, GateRun g) {
  spdlog::info("plan {}: the integration tip {} passes: {}", plan, g.sha.substr(0, 12),
               g.check.summary);
  crash_point("gate-passed");  // the tip passed and its worktree is gone, nothing stored
  std::vector<Event> events;
  events.push_back(check_event(plan, g));
  if (s->ctx.config->merge == MergeMode::pr) {  // the pull request next (pull_request.cpp)
    co_await s->journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
      record(l, g);
      w.events = events;
      return std::nullopt;
    });
    co_await publish_pr(s, plan, false);
    co_return;
  }
  std::function<void(Loop&)> also = [&g](Loop& l) { record(l, g); };
  co_await mark_complete_and_merge(*s, plan, std::move(events), std::move(also));
}

// The tip failed (or could not be checked): a fix loop when one may help, else blocked.
awaitable<void> on_gate_failed(State s, std::string plan, GateRun g) {
  if (!g.error.empty()) {
    g.check.passed = false;
    g.check.summary = g.error;
    g.check.output = g.error + "\n";
  }
  spdlog::warn("plan {}: the integration tip {} fails: {}", plan, g.sha.substr(0, 12),
               g.check.summary);
  Loop fix;
  bool made_fix = false;
  co_await s->journal.edit_tree(
      plan, [&](std::vector<Loop>& tree, WriteSet& w) -> std::optional<Error> {
        auto root =
            std::find_if(tree.begin(), tree.end(), [&](const Loop& l) { return l.id == plan; });
        if (root == tree.end()) return make_error(ErrorCode::not_found, "no loop " + plan);
        Loop p = *root;
        record(p, g);
        w.events.push_back(check_event(plan, g));
        // A fix loop only helps when the command ran and failed on its own terms.
        made_fix = g.error.empty() && !g.check.could_not_start && may_make_fix_loop(p);
        if (made_fix) {
          ++p.tree.gate_fixes;
          fix = make_fix_loop(p, next_fix_number(tree, plan), g.check.summary,
                              g.check.feedback.empty() ? g.check.output : g.check.feedback,
                              merged_loops(tree), *s->ctx.config);
          w.creates.push_back(fix);
          w.events.push_back(api::encode(
              fix.id,
              api::LoopCreated{LoopType::code, plan, first_line(fix.task, 200), true, false}));
          w.events.push_back(api::encode(plan, api::IntegrationFix{fix.id}));
        } else {
          std::string why = "its integration branch " + git::integration_branch(plan) +
                            " fails: " + g.check.summary + " (" + what_to_do(plan) + ")";
          if (!engine::transition(p, LoopStatus::blocked, EndReason::integration_failed, why,
                                  w.events))
            return not_allowed(p, "cannot block");
        }
        w.updates.push_back(std::move(p));
        return std::nullopt;
      });
  if (made_fix) spawn_run(s, fix.id);
}

}  // namespace

awaitable<void> check_integration(State s, std::string plan) {
  auto loaded = co_await s->journal.load(plan);
  if (!loaded || loaded->status != LoopStatus::complete || loaded->tree.tree_complete) co_return;
  auto tip_of = [wt = s->worktrees, plan] { return wt.integration_tip(plan); };
  auto tip = co_await run_blocking(s->ctx.pool, tip_of);
  if (tip && loaded->tree.gate_result == GateResult::passed && loaded->tree.gate_sha == *tip) {
    if (s->ctx.config->merge == MergeMode::pr) {  // checked before a restart: push, or CI again
      co_await resume_pr(s, std::move(*loaded), *tip);
      co_return;
    }
    std::vector<Event> none;  // checked before a crash
    co_await mark_complete_and_merge(*s, plan, std::move(none), nullptr);
    co_return;
  }
  const std::string command = s->ctx.config->loop(LoopType::code).validation;
  co_await s->journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    l.tree.gate_result = GateResult::checking;
    w.events.push_back(
        api::encode(l.id, api::IntegrationCheckStarted{tip ? *tip : std::string(), command}));
    return std::nullopt;
  });
  crash_point("gate-started");  // stored `checking`, the gate's worktree not made yet
  GateRun g = co_await run_gate(*s, plan);
  if (g.check.stopped) co_return;  // the daemon stops: the next start checks again
  if (g.error.empty() && g.check.passed)
    co_await on_gate_passed(s, plan, std::move(g));
  else
    co_await on_gate_failed(s, plan, std::move(g));
}

awaitable<Result<bool>> check_tip_now(ManagerState& s, std::string plan) {
  GateRun g = co_await run_gate(s, plan);
  if (!g.error.empty()) co_return make_error(ErrorCode::conflict, g.error);
  if (g.check.stopped)
    co_return make_error(ErrorCode::unsupported, "the daemon is shutting down (start it again)");
  co_await s.journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    const bool blocked = gate_blocked(l);
    record(l, g);
    if (blocked) l.tree.gate_result = GateResult::failed;  // stays blocked until reopen_gate
    w.events.push_back(check_event(plan, g));
    return std::nullopt;
  });
  co_return g.check.passed;
}

awaitable<void> block_after_fix(State s, Loop failed) {
  const std::string plan = failed.plan_id;
  co_await s->journal.edit_tree(
      plan, [&](std::vector<Loop>& tree, WriteSet& w) -> std::optional<Error> {
        for (Loop& l : tree) {
          if (l.id == failed.id) {
            l.tree.rolled_up = true;
            w.updates.push_back(l);
          } else if (l.id == plan && l.status == LoopStatus::complete &&
                     l.tree.pr_checks == PrChecks::failed) {
            // A CI fix loop (merge: pr) that failed: the plan is held with the failing checks.
            std::string why = "its CI fix loop " + failed.id + " failed (" +
                              first_line(failed.status_reason, 120) +
                              "); the checks of pull request #" + std::to_string(l.tree.pr_number) +
                              " still fail: " + l.tree.pr_failing + " (fix it on branch " +
                              git::integration_branch(plan) + ", then `loopr merge " + plan +
                              "` pushes and waits again)";
            if (engine::transition(l, LoopStatus::blocked, EndReason::ci_failed, why, w.events))
              w.updates.push_back(l);
          } else if (l.id == plan && l.status == LoopStatus::complete) {
            std::string why =
                "its fix loop " + failed.id + " failed (" + first_line(failed.status_reason, 120) +
                "); the integration branch " + git::integration_branch(plan) +
                " still fails: " + l.tree.gate_summary + " (" + what_to_do(plan) + ")";
            l.tree.gate_result = GateResult::failed;
            if (engine::transition(l, LoopStatus::blocked, EndReason::integration_failed, why,
                                   w.events))
              w.updates.push_back(l);
          }
        }
        return std::nullopt;
      });
}

// A reopened plan is complete again: as approved (resumed, checked again) or merged by the person.
static EndReason reopen_end(GateResult result) {
  return result == GateResult::none ? EndReason::approved : EndReason::merged_by_user;
}

awaitable<Result<Loop>> reopen_gate(ManagerState& s, std::string plan, GateResult result,
                                    std::string why, bool complete_tree) {
  Loop out;
  auto stored = co_await s.journal.edit_tree(
      plan, [&](std::vector<Loop>& tree, WriteSet& w) -> std::optional<Error> {
        for (Loop& l : tree) {
          // A fix loop that failed is superseded: the person decided what happens instead.
          if (is_fix_loop_id(l.id) && l.status == LoopStatus::failed) {
            if (engine::transition(l, LoopStatus::invalidated, EndReason::superseded,
                                   "superseded: " + why, w.events))
              w.updates.push_back(l);
          } else if (l.id == plan) {
            if (!gate_blocked(l)) return not_allowed(l, "its integration gate is not blocked");
            l.tree.gate_result = result;
            l.tree.gate_fixes = 0;
            l.tree.tree_complete = complete_tree;
            if (complete_tree) w.events.push_back(api::encode(l.id, api::TreeComplete{}));
            if (!engine::transition(l, LoopStatus::complete, reopen_end(result), why, w.events))
              return not_allowed(l, "cannot reopen");
            out = l;
            w.updates.push_back(l);
          }
        }
        return std::nullopt;
      });
  if (!stored) co_return stored.take_error();
  co_return out;
}

}  // namespace loopr::manager
