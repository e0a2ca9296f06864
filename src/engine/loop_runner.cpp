// One loop, iteration after iteration (DESIGN.md "One iteration"):
//   1 read state · 2 render the prompt · 3+4 talk with the model (scheduler slots, tools)
//   5 validate · 6 checkpoint-commit and record atomically · 7 decide: complete, go on, or stop.
// The model never decides anything about the loop; every branch below is plain code.
#include <spdlog/spdlog.h>

#include <loopr/api/events.hpp>
#include <loopr/core/clean_checkpoint.hpp>
#include <loopr/core/disk.hpp>
#include <loopr/core/sweep_handoff.hpp>
#include <loopr/engine/engine.hpp>
#include <loopr/engine/feedback.hpp>

#include "engine/iteration_rules.hpp"
#include "engine/iteration_run.hpp"
#include "engine/until_stopped.hpp"

namespace loopr::engine {
namespace {

// The run's one Loop is changed in place by these (see IterationRun::run on frame sizes).

// `loop` moved as `move` says and stored; left as it was when that is refused.
awaitable<Result<void>> move_loop(LoopJournal& journal, Loop& loop, const Move& move) {
  auto stored = co_await journal.save_status(loop, move.status, move.end, move.reason);
  if (!stored) co_return stored.take_error();
  loop = std::move(*stored);
  co_return ok();
}

awaitable<Result<void>> load_loop(LoopJournal& journal, std::string id, Loop& out) {
  auto loaded = co_await journal.load(std::move(id));
  if (!loaded) co_return loaded.take_error();
  out = std::move(*loaded);
  co_return ok();
}

// What the iterations of one run keep for the next in memory (a clean checkpoint, a handed-over
// sweep: core/clean_checkpoint.hpp) is forgotten when the run ends, whichever way: a loop that
// ended keeps nothing in a daemon that runs for months (issue 47 item 6), and a loop run again
// later reads its worktree afresh.
// (It holds a copy of the path: the run's Loop is moved into its exit before this goes.)
struct ForgetKeptOnExit {
  std::filesystem::path worktree;
  ~ForgetKeptOnExit() {
    if (worktree.empty()) return;
    drop_handed_sweep(worktree);
    drop_clean_checkpoint(worktree);
  }
};

// When `plan`'s runtime started counting (TreeMarks::runtime_from): its last approval or
// iterate, else its submit.
TimestampMs runtime_start(const Loop& plan) {
  return plan.tree.runtime_from > 0 ? plan.tree.runtime_from : plan.created_at;
}

// What a run needs of its plan: when the tree's runtime started and the request's own limits.
struct PlanFacts {
  TimestampMs start = 0;
  RequestBudget budget;
};

awaitable<PlanFacts> plan_facts(LoopJournal& journal, std::string plan_id, TimestampMs fallback) {
  auto plan = co_await journal.load(std::move(plan_id));
  if (!plan) co_return PlanFacts{fallback, {}};
  co_return PlanFacts{runtime_start(*plan), plan->tree.budget};
}

// A store write failed for want of space: RocksDB takes no writes until it recovers. The loop
// is stored paused (`disk_full`) as soon as it takes them again (asked every few seconds), so the
// daemon resumes it with the space; a stop ends the wait (the next start runs it again).
awaitable<void> pause_for_disk(EngineContext& ctx, LoopControl& control, std::string id,
                               std::string what, Loop& loop) {
  for (;;) {
    co_await run_blocking(ctx.pool, [&] { (void)ctx.journal.store().resume_writes(); });
    if (co_await load_loop(ctx.journal, id, loop)) {
      DiskLook look =
          co_await run_blocking(ctx.pool, [&] { return look_at_disk(ctx.paths, loop); });
      const Move full = on_disk_full(loop, look.free, look.dir,
                                     "the store could not write: " + first_line(what, 160));
      if (loop.status != LoopStatus::running || co_await move_loop(ctx.journal, loop, full))
        co_return;
    }
    if (!co_await sleep_unless_stopped(control, std::chrono::seconds(3))) co_return;
  }
}

// The gate's say; `loop` is the stored record afterwards.
awaitable<bool> ask_gate(IterationGate& gate, Loop& loop) {
  IterationGate::Verdict verdict = co_await gate.before_iteration(loop);
  loop = std::move(verdict.loop);
  co_return verdict.go_on;
}

// Whether the next iteration may start; if not, the loop is moved (stopped, paused, blocked,
// at a limit) or the gate held it, and the run ends.
awaitable<bool> may_iterate(EngineContext& ctx, LoopControl& control, IterationGate* gate,
                            const Config& config, const PlanFacts& plan, Loop& loop) {
  // Stop, pause, an open question, an attended pass the person resumed (iteration_rules).
  const BoundaryRequests asked{control.stop_requested(), control.stop_reason(), control.stop_end(),
                               control.pause_requested()};
  if (Move move = at_boundary(loop, asked); !move.goes_on()) {
    (void)co_await move_loop(ctx.journal, loop, move);
    co_return false;
  }
  if (gate) {
    bool go_on = co_await ask_gate(*gate, loop);
    if (!go_on) co_return false;
  }
  if (needs_commands(loop, config)) {
    // No silent fallback: without a working sandbox a loop that runs commands waits for the
    // person (who installs what is missing, or chooses `sandbox: none`) instead of failing.
    auto problem = co_await run_blocking(ctx.pool, [&] { return ctx.executor.unavailable(); });
    if (problem) {
      const Move blocked{
          LoopStatus::blocked, EndReason::sandbox_unavailable,
          "commands cannot run: " + *problem + "; then `loopr resume " + loop.id + "`"};
      (void)co_await move_loop(ctx.journal, loop, blocked);
      co_return false;
    }
  }
  // limits.min_free_space: no iteration starts on a (nearly) full disk; the loop pauses and
  // the daemon resumes it once there is space (manager: watch_disk).
  DiskLook look = co_await run_blocking(ctx.pool, [&] { return look_at_disk(ctx.paths, loop); });
  if (Move full = check_disk(loop, look.free, config.limits.min_free_space, look.dir);
      !full.goes_on()) {
    (void)co_await move_loop(ctx.journal, loop, full);
    co_return false;
  }
  // Plain arithmetic on the record, the config and the cost ledger: no store read.
  if (Move limit = check_limits(loop, config, ctx.costs.total(loop.plan_id), now_ms(), plan.start,
                                plan.budget, ctx.costs.input_tokens(loop.plan_id));
      !limit.goes_on()) {
    std::vector<Event> events;
    if (auto capped = limit_event(ctx, loop, limit, config, plan.budget))
      events.push_back(std::move(*capped));
    auto stored = co_await ctx.journal.save_status(loop, limit.status, limit.end, limit.reason,
                                                   std::move(events));
    if (stored) loop = std::move(*stored);
    co_return false;
  }
  co_return true;
}

}  // namespace

awaitable<RunExit> LoopRunner::run(std::string loop_id, std::shared_ptr<LoopControl> control,
                                   IterationGate* gate) {
  LoopJournal& journal = ctx_.journal;
  RunExit exit;
  Loop& loop = exit.loop;
  Result<void> step = co_await load_loop(journal, loop_id, loop);
  if (!step) {
    spdlog::error("cannot run loop {}: {}", loop_id, step.error().message);
    co_return RunExit{};
  }
  if (loop.status == LoopStatus::invalidated) co_return exit;
  if (loop.status != LoopStatus::running) {
    const Move start{LoopStatus::running, EndReason::none, ""};
    step = co_await move_loop(journal, loop, start);
    if (!step) {
      spdlog::error("cannot start loop {}: {}", loop_id, step.error().message);
      co_return exit;
    }
  }
  // When the tree's runtime started (approval, not submit: the gate's wait is the person's
  // time); it changes only while no loop of the tree runs, so it is read once per run.
  PlanFacts plan{runtime_start(loop), loop.tree.budget};
  if (loop.plan_id != loop.id) plan = co_await plan_facts(journal, loop.plan_id, loop.created_at);
  const TimestampMs plan_start = plan.start;

  IterationRun iteration(ctx_, control, plan.budget, plan_start);
  const ForgetKeptOnExit forget{loop.worktree};
  while (true) {
    std::shared_ptr<const Config> config = tree_config(ctx_.config, plan.budget);
    if (!co_await may_iterate(ctx_, *control, gate, *config, plan, loop)) co_return exit;
    step = co_await iteration.run(loop);
    if (!step && is_no_space(step.error().message)) {
      // The store could not write the iteration (the disk is full): nothing stored is lost, the
      // iteration that was not recorded runs again once the loop is resumed.
      spdlog::warn("loop {}: {}", loop_id, step.error().message);
      co_await pause_for_disk(ctx_, *control, loop_id, step.error().message, loop);
      co_return exit;
    }
    if (!step) {
      // A store conflict or an illegal transition: a bug or a concurrent writer. Reload and end
      // the run rather than overwrite what someone else stored.
      spdlog::error("loop {}: {}", loop_id, step.error().message);
      step = co_await load_loop(journal, loop_id, loop);
      co_return exit;
    }
    if (loop.status != LoopStatus::running) co_return exit;
    if (config->limits.cooldown.count() > 0)
      co_await sleep_unless_stopped(*control, config->limits.cooldown);
  }
}

}  // namespace loopr::engine
