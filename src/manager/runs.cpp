// A run's life: wait for a loop slot, make the worktree if the loop has none, let the engine
// iterate (with the rebase gate at each boundary), then hand the loop's end to completion or
// the failure policy.
#include <spdlog/spdlog.h>

#include <loopr/api/events.hpp>
#include <loopr/core/crash_point.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/core/text.hpp>
#include <loopr/engine/worktree_setup.hpp>

#include <loopr/core/disk.hpp>

#include "manager/driver.hpp"
#include "manager/iteration_gate.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {

// ---------------------------------------------------------------- RunTable

namespace {

// Loop slots go to loops closer to code first (then in the order they were spawned): a tree
// finishes its code loops before it starts more specs, so work reaches the integration branch
// early and the worktrees in use stay few.
int slot_priority(const std::string& id) {
  switch (type_of_id(id).value_or(LoopType::plan)) {
    case LoopType::code:
      return 3;
    case LoopType::phase:
      return 2;
    case LoopType::spec:
      return 1;
    case LoopType::plan:
      break;
  }
  return 0;
}

}  // namespace

std::shared_ptr<Run> RunTable::add(const std::string& id) {
  if (runs_.count(id)) return nullptr;
  auto run = std::make_shared<Run>(id, ex_, slots_.make_waiter(slot_priority(id)));
  runs_[id] = run;
  per_plan_[root_plan_id(id)][id] = run;
  return run;
}

void RunTable::remove(const std::shared_ptr<Run>& run) {
  auto it = runs_.find(run->id);
  if (it == runs_.end() || it->second != run) return;
  runs_.erase(it);
  auto plan = per_plan_.find(root_plan_id(run->id));
  if (plan == per_plan_.end()) return;
  plan->second.erase(run->id);
  if (plan->second.empty()) per_plan_.erase(plan);
}

std::shared_ptr<Run> RunTable::find(const std::string& id) const {
  auto it = runs_.find(id);
  return it == runs_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<Run>> RunTable::all() const {
  std::vector<std::shared_ptr<Run>> out;
  out.reserve(runs_.size());
  for (const auto& [id, run] : runs_) out.push_back(run);
  return out;
}

bool RunTable::stop(const Run& run, const std::string& reason, EndReason end,
                    engine::StopCause cause) {
  run.control->request_stop(reason, cause, end);
  if (run.slot->granted) return true;
  slots_.cancel(run.slot);
  return false;
}

bool RunTable::pause(const Run& run) {
  run.control->request_pause();
  if (run.slot->granted) return true;
  slots_.cancel(run.slot);
  return false;
}

void RunTable::notify_integration_moved(const std::string& plan_id, const std::string& except) {
  auto plan = per_plan_.find(plan_id);
  if (plan == per_plan_.end()) return;
  for (auto& [id, run] : plan->second)
    if (id != except) run->control->notify_integration_updated();
}

bool ManagerState::under_paused_root(const std::string& id) const {
  for (const auto& root : paused_roots)
    if (in_subtree(id, root)) return true;
  return false;
}

// ---------------------------------------------------------------- a run

namespace {

// Whether a loop read for its run still has anything to run (not ended, not waiting for a
// person).
bool runnable(const Loop& loop) {
  return !is_terminal(loop.status) && loop.status != LoopStatus::awaiting_approval &&
         loop.status != LoopStatus::awaiting_answer &&
         loop.status != LoopStatus::paused && loop.status != LoopStatus::blocked;
}

// Makes the loop's worktree when it has none (or its folder is gone). When it cannot be made,
// the loop is stored failed (and `loop` is that record) and the answer is false.
awaitable<bool> make_worktree(ManagerState& s, Loop& loop) {
  auto make = [wt = s.worktrees, loop, base = s.ctx.config->base_branch] {
    return wt.prepare(loop, base);
  };
  // A few at a time: with many slots free at once (a start with 1,000 pending loops), the pool
  // would otherwise run every checkout before the first iteration's work (issue 18).
  bool made_room = co_await s.worktree_makers.acquire(s.worktree_makers.make_waiter());
  struct Release {
    AsyncSemaphore& sem;
    bool held;
    ~Release() {
      if (held) sem.release();
    }
  } release{s.worktree_makers, made_room};
  auto prepared = co_await run_blocking(s.ctx.pool, make);
  if (!prepared) {
    std::string why = "its worktree could not be made: " + prepared.error().message;
    spdlog::error("loop {}: {}", loop.id, why);
    // A full disk is not the loop's failure: it waits (paused, disk_full) for space.
    const bool no_space = is_no_space(why);
    auto failed = co_await s.journal.save_status(
        loop, no_space ? LoopStatus::paused : LoopStatus::failed,
        no_space ? EndReason::disk_full : EndReason::internal_error,
        no_space ? disk_full_text(free_bytes(s.ctx.paths.root).value_or(0), s.ctx.paths.root.string()) +
                       " (" + why + "); it resumes by itself once there is space"
                 : why);
    if (failed) loop = std::move(*failed);
    co_return false;
  }
  if (prepared->worktree == loop.worktree) co_return true;  // it was there
  auto stored = co_await s.journal.edit(loop.id, [&](Loop& l, WriteSet&) -> std::optional<Error> {
    l.worktree = prepared->worktree;
    l.branch = prepared->branch;
    if (prepared->based_on && l.type != LoopType::plan) l.tree.based_on = *prepared->based_on;
    return std::nullopt;
  });
  if (!stored) co_return false;
  loop = std::move(*stored);
  co_return true;
}

// The config's `setup:` commands in a code loop's worktree, once (engine/worktree_setup.hpp).
// A failure blocks the loop with the output before any iteration (no model call); `resume`
// runs the setup again. False when the run must end (`loop` is then the stored record).
awaitable<bool> set_up_worktree(ManagerState& s, const Run& run, Loop& loop) {
  engine::SetupRequest request;
  request.workdir = loop.worktree;
  request.env = {{"LOOPR_LOOP_ID", loop.id},
                 {"LOOPR_LOOP_TYPE", to_string(loop.type)},
                 {"LOOPR_PLAN_ID", loop.plan_id}};
  request.cancel = run.control->cancel_flag();
  request.log_file = s.ctx.paths.loop_log_dir(loop.id) / "setup.log";
  engine::SetupRun setup = co_await engine::run_setup(s.ctx, std::move(request));
  if (!setup.ran || setup.stopped) co_return true;  // a stop: the engine stores it at once
  std::vector<Event> events;
  events.push_back(api::encode(
      loop.id, api::SetupFinished{setup.passed, setup.summary, setup.duration_ms, "setup.log"}));
  if (setup.passed) {
    co_await s.journal.note(std::move(events));
    co_return true;
  }
  std::string why = engine::setup_failure_text(setup, 600) +
                    "\n(fix the command in `setup:` of .loopr/config.yml, or what it needs, then "
                    "`loopr resume " + loop.id + "`; the whole output is in " +
                    (s.ctx.paths.loop_log_dir(loop.id) / "setup.log").string() + ")";
  spdlog::warn("loop {}: {}", loop.id, setup.summary);
  auto blocked = co_await s.journal.save_status(loop, LoopStatus::blocked, EndReason::setup_failed,
                                                why, std::move(events));
  if (blocked) loop = std::move(*blocked);
  co_return false;
}

// Loads `id` into `out`; false when it cannot be read.
awaitable<bool> load_into(ManagerState& s, std::string id, Loop& out) {
  auto loaded = co_await s.journal.load(std::move(id));
  if (!loaded) co_return false;
  out = std::move(*loaded);
  co_return true;
}

// The run; `ended` is the loop as the run left it (empty id: nothing for after_run). Frames of
// runs live as long as their loops iterate, so the loop is held once, here and in the engine.
awaitable<void> run_body(State s, std::shared_ptr<Run> run, Loop& ended) {
  bool granted = co_await s->runs.slots().acquire(run->slot);
  if (!granted) co_return;
  struct Release {
    AsyncSemaphore& slots;
    ~Release() { slots.release(); }
  } release{s->runs.slots()};
  if (run->control->stop_requested() || run->control->pause_requested()) co_return;

  bool loaded = co_await load_into(*s, run->id, ended);
  if (!loaded) co_return;
  // Ended meanwhile (a race with another step): what its end asks for still happens.
  if (!runnable(ended)) co_return;
  bool made = co_await make_worktree(*s, ended);
  if (!made) co_return;
  if (ended.type == LoopType::code) {
    bool ready = co_await set_up_worktree(*s, *run, ended);
    if (!ready) co_return;
  }

  engine::LoopRunner runner(s->ctx);
  RebaseGate gate(*s, run);
  engine::RunExit exit = co_await runner.run(run->id, run->control, &gate);
  ended = std::move(exit.loop);
}

// A run that ended on an exception (a bug, or text loopr could not handle) leaves its loop
// `running` with nothing behind it, for good, also after a restart: it is paused instead, with
// the error as its reason, so a person sees it and `loopr resume` tries again.
awaitable<void> pause_after_exception(State s, std::string id, std::string what) {
  auto loaded = co_await s->journal.load(id);
  if (!loaded) co_return;
  const LoopStatus st = loaded->status;
  if (st != LoopStatus::running && st != LoopStatus::pending && st != LoopStatus::rebasing)
    co_return;
  std::string why = "its run stopped on an internal error (" +
                    std::string(utf8_prefix(what, 300)) + "); `loopr resume " + id +
                    "` runs it again";
  auto paused = co_await s->journal.save_status(std::move(*loaded), LoopStatus::paused,
                                                EndReason::run_error, why, {});
  if (!paused) spdlog::error("loop {}: pausing it after the error: {}", id, paused.error().message);
}

awaitable<void> run_loop(State s, std::shared_ptr<Run> run) {
  Loop ended;
  std::optional<std::string> failure;
  try {
    co_await run_body(s, run, ended);
  } catch (const std::exception& e) {
    spdlog::error("loop {}: its run ended with an exception: {}", run->id, e.what());
    ended = Loop{};
    failure = e.what();
  }
  if (failure && !s->stopping) {
    try {
      co_await pause_after_exception(s, run->id, *failure);
    } catch (const std::exception& e) {
      spdlog::error("loop {}: pausing it after the error: {}", run->id, e.what());
    }
  }
  run->done.set();
  s->runs.remove(run);
  try {
    if (!s->stopping && !ended.id.empty()) co_await after_run(s, std::move(ended));
  } catch (const std::exception& e) {
    spdlog::error("loop {}: after its run: {}", run->id, e.what());
  }
}

}  // namespace

void spawn_run(const State& s, const std::string& id) {
  if (s->stopping) return;
  auto run = s->runs.add(id);
  if (!run) return;
  net::co_spawn(s->ctx.io, run_loop(s, run), net::detached);
}

awaitable<void> after_run(State s, Loop loop) {
  if (loop.status == LoopStatus::complete) {
    crash_point("loop-complete");  // stored complete, nothing of its completion done
    co_await on_complete(s, loop.id);
  }
  else if (loop.status == LoopStatus::failed)
    co_await on_failed(s, loop.id);
  else if (loop.status == LoopStatus::awaiting_approval) {
    // The forecast first: a dry run shows it before it ends at the gate.
    const bool dry_run = loop.tree.dry_run;
    const std::string id = loop.id;
    // Shown at the gate (started at submit): one a restart cut short or never began starts now.
    const BaselineResult baseline = (co_await load_baseline(*s, id)).result;
    if (baseline == BaselineResult::none || baseline == BaselineResult::checking)
      start_baseline(s, id);
    co_await forecast_at_gate(s, std::move(loop));
    if (dry_run) co_await end_dry_run(s, id);
  }
}

awaitable<void> finish_loop(State s, std::string id) {
  auto loaded = co_await s->journal.load(id);
  if (loaded) co_await after_run(s, std::move(*loaded));
}

awaitable<void> wait_for_runs(std::vector<std::shared_ptr<Run>> runs,
                              std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (auto& run : runs) co_await run->done.wait_until(deadline);
}

Error not_allowed(const Loop& loop, const std::string& what) {
  return Error{ErrorCode::illegal_transition,
               "loop " + loop.id + " is " + to_string(loop.status) + ": " + what};
}

}  // namespace loopr::manager
