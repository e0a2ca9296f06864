// The baseline check (src/manager/README.md): when a plan is submitted, the project's `setup:`
// and loops.code.validation run in a fresh worktree of its integration branch (the base branch's
// tip), in the sandbox, exactly as in a code loop's worktree, while the plan is being written.
// Its state and result are stored apart from the plan's record (baseline_state.hpp: the check
// runs while the plan's own run writes that record, and never races it), shown at the gate, and
// kept under a meta key per commit and config (another plan on the same commit reuses it). The
// plan's children are made only after it: a failure under `baseline: block` blocks the plan
// before any code loop runs (that one write to the record is made once the plan's run ended).
#include <spdlog/spdlog.h>

#include <fstream>

#include <loopr/api/events.hpp>
#include <loopr/core/commit_message.hpp>
#include <loopr/engine/code_check.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/engine/test_output.hpp>
#include <loopr/engine/worktree_setup.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/test_outputs.hpp>
#include <loopr/project/toolchains.hpp>

#include "manager/driver.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {

namespace {

struct BaselineRun {
  bool passed = false;
  bool stopped = false;  ///< the daemon is stopping: nothing is stored, it runs again
  /// The sandbox or the cluster never ran it: no verdict on the tests (the loops meet the same
  /// problem and say so themselves), so it blocks nothing.
  bool could_not_start = false;
  std::string sha;
  std::string summary;
  std::string output;
  std::string log;
  std::int64_t duration_ms = 0;
  std::int64_t setup_ms = 0;
  std::vector<std::string> outputs;  ///< untracked paths the commands left in the worktree
};

std::string seconds(std::int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000);
  return buf;
}

// Setup and validation in a fresh worktree of the plan's integration tip.
awaitable<BaselineRun> run_check(ManagerState& s, const std::string& plan) {
  BaselineRun r;
  auto prepare = [wt = s.worktrees, plan] { return wt.prepare_baseline(plan); };
  auto checkout = co_await run_blocking(s.ctx.pool, prepare);
  if (!checkout) {  // loopr's own problem (git), not the tests': it blocks nothing
    r.could_not_start = true;
    r.summary = "its integration branch cannot be checked out: " + checkout.error().message;
    r.output = r.summary + "\n";
    co_return r;
  }
  r.sha = checkout->sha;
  const std::map<std::string, std::string> env = {
      {"LOOPR_PLAN_ID", plan}, {"LOOPR_LOOP_ID", plan}, {"LOOPR_LOOP_TYPE", "baseline"}};
  auto started = std::chrono::steady_clock::now();
  engine::SetupRequest setup_request;
  setup_request.workdir = checkout->worktree;
  setup_request.env = env;
  setup_request.cancel = &s.gate_cancel;
  engine::SetupRun setup = co_await engine::run_setup(s.ctx, std::move(setup_request));
  r.setup_ms = setup.duration_ms;
  std::string text = setup.output;
  if (!setup.passed) {
    r.stopped = setup.stopped;
    r.could_not_start = setup.could_not_start;
    r.summary = setup.summary;
    r.output = setup.output;
  } else {
    engine::CodeCheckRequest request;
    request.command = s.ctx.config->loop(LoopType::code).validation;
    request.workdir = checkout->worktree;
    request.env = env;
    request.cancel = &s.gate_cancel;
    engine::CodeCheck check = co_await engine::run_code_check(s.ctx, std::move(request));
    r.passed = check.passed;
    r.stopped = check.stopped;
    r.could_not_start = check.could_not_start;
    r.summary = check.summary;
    r.output = check.output;
    // A program the sandbox hides (a venv's interpreter under the home): which, and the line.
    if (!check.passed && !check.stopped)
      if (auto hidden = project::explain_hidden_path(check.output, s.ctx.paths.root, *s.ctx.config,
                                                     process_env()))
        r.summary += "; " + *hidden;
    text += "$ " + check.command + "\n" + check.output + "\n";
  }
  r.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  text += "# " + r.summary + "\n";
  // What the tests left behind (coverage/, logs): listed, and never committed by a loop.
  auto finish = [wt = s.worktrees, plan, paths = s.ctx.paths, sha = r.sha, text,
                 worktree = checkout->worktree, mounts = s.ctx.config->sandbox.checkout_paths()] {
    auto outputs = git::untracked_paths(worktree, mounts);
    git::record_test_outputs(paths.root, outputs);
    if (auto removed = wt.remove_baseline(plan); !removed)
      spdlog::warn("plan {}: the baseline check's worktree stays: {}", plan,
                   removed.error().message);
    return std::make_pair(write_plan_log(paths, plan, "baseline", sha, text), outputs);
  };
  std::tie(r.log, r.outputs) = co_await run_blocking(s.ctx.pool, finish);
  co_return r;
}

BaselineState state_of(const BaselineRun& r) {
  BaselineState b;
  b.sha = r.sha;
  b.result = r.passed            ? BaselineResult::passed
             : r.could_not_start ? BaselineResult::unavailable
                                 : BaselineResult::failed;
  b.summary = r.summary;
  b.output = gate_output_tail(r.output);
  b.log = r.log;
  b.ms = r.duration_ms;
  b.setup_ms = r.setup_ms;
  b.outputs = r.outputs;
  b.fingerprint = r.passed || r.could_not_start ? "" : engine::output_fingerprint(r.output);
  return b;
}

// Stores the plan's baseline state (no write to the plan's record), with `events` and `more`.
awaitable<bool> store_state(ManagerState& s, const std::string& plan, const BaselineState& b,
                            std::vector<Event> events = {},
                            std::vector<std::pair<std::string, std::string>> more = {}) {
  WriteSet w;
  w.meta.emplace_back(baseline_state_key(plan), to_json(b).dump());
  for (auto& m : more) w.meta.push_back(std::move(m));
  w.events = std::move(events);
  auto stored = co_await s.journal.commit(std::move(w));
  if (!stored)
    spdlog::warn("plan {}: storing its baseline check: {}", plan, stored.error().message);
  co_return stored.ok();
}

Event check_event(const std::string& plan, const BaselineState& b, bool reused) {
  return api::encode(plan, api::BaselineCheck{b.sha, b.result == BaselineResult::passed, b.summary, b.ms,
                                              b.setup_ms, b.log, reused});
}

awaitable<void> check_baseline(State s, std::string plan) {
  struct Done {
    std::set<std::string>& running;
    std::string plan;
    ~Done() { running.erase(plan); }
  } done{s->baselines, plan};
  std::shared_ptr<const Config> config = s->ctx.config;
  auto tip_of = [wt = s->worktrees, plan] { return wt.integration_tip(plan); };
  auto tip = co_await run_blocking(s->ctx.pool, tip_of);
  // The check's result as the plan keeps it; a passing one is also kept per commit and config
  // (the same shape, one codec: baseline_state.hpp) for the next plan on that commit.
  std::optional<BaselineState> state;
  bool reused = false;
  std::string key;
  if (!tip) {  // loopr's own problem, not the tests': it blocks nothing
    BaselineRun unread;
    unread.could_not_start = true;
    unread.summary = "its integration branch cannot be read: " + tip.error().message;
    unread.output = unread.summary + "\n";
    state = state_of(unread);
  } else {
    key = baseline_meta_key(*tip, *config);
    auto cache = [&store = s->journal.store(), key] { return store.get_meta(key); };
    auto cached = co_await run_blocking(s->ctx.pool, cache);
    if (cached && *cached) {
      BaselineState kept =
          baseline_state_from_json(nlohmann::json::parse(**cached, nullptr, false));
      if (kept.result == BaselineResult::passed) {  // a failure is always checked again
        state = std::move(kept);
        reused = true;
      }
    }
  }
  if (!state) {
    BaselineState checking;
    checking.result = BaselineResult::checking;
    checking.sha = *tip;
    const bool stored = co_await store_state(*s, plan, checking, {}, {});
    if (!stored) co_return;
    spdlog::info("plan {}: baseline check of {} started", plan, tip->substr(0, 12));
    BaselineRun run = co_await run_check(*s, plan);
    if (run.stopped || s->stopping) co_return;  // runs again at the next start
    state = state_of(run);
  }
  spdlog::info("plan {}: baseline {} in {}: {}", plan, to_string(state->result), seconds(state->ms),
               state->summary);
  std::vector<std::pair<std::string, std::string>> more;
  if (!reused && state->result == BaselineResult::passed && !key.empty())
    more.emplace_back(key, to_json(*state).dump());
  std::vector<Event> events;
  events.push_back(check_event(plan, *state, reused));
  const bool stored = co_await store_state(*s, plan, *state, std::move(events), std::move(more));
  if (!stored) co_return;
  // A plan approved meanwhile waits for this to make its children (or to be blocked).
  if (s->baseline_waiters.erase(plan) > 0)
    net::co_spawn(s->ctx.io, on_complete(s, plan), net::detached);
}

}  // namespace

void start_baseline(const State& s, const std::string& plan) {
  if (s->stopping || s->ctx.config->baseline == BaselineMode::off) return;
  if (!s->baselines.insert(plan).second) return;  // one under way
  net::co_spawn(s->ctx.io, check_baseline(s, plan), net::detached);
}

awaitable<BaselineState> load_baseline(ManagerState& s, std::string plan_id) {
  auto read = [&store = s.journal.store(), plan_id] { return baseline_of(store, plan_id); };
  co_return co_await run_blocking(s.ctx.pool, read);
}

awaitable<bool> baseline_ready(State s, Loop& plan) {
  const BaselineState baseline = co_await load_baseline(*s, plan.id);
  BaselineStep step =
      baseline_step(baseline, s->ctx.config->baseline, s->baselines.count(plan.id) > 0);
  if (step == BaselineStep::proceed) co_return true;
  if (step != BaselineStep::block) {
    s->baseline_waiters.insert(plan.id);  // the check's end finishes it
    if (step == BaselineStep::check) start_baseline(s, plan.id);
    co_return false;
  }
  const std::string why = baseline_block_reason(baseline, plan.id, s->ctx.config->base_branch);
  spdlog::warn("plan {} is blocked: its baseline check failed: {}", plan.id, baseline.summary);
  auto blocked = co_await s->journal.save_status(plan, LoopStatus::blocked,
                                                 EndReason::baseline_failed, why, {});
  if (blocked) plan = std::move(*blocked);
  co_return false;
}

awaitable<ActionResult> resume_baseline(State s, Loop plan) {
  const std::string base = s->ctx.config->base_branch;
  auto update = [wt = s->worktrees, id = plan.id, base] {
    return wt.update_from_base(id, base, loop_commit_message(id, "update from " + base));
  };
  auto merged = co_await run_blocking(s->ctx.pool, update);
  if (!merged)
    co_return make_error(ErrorCode::conflict,
                         "cannot bring " + base + " into " + git::integration_branch(plan.id) +
                             ": " + merged.error().message + " (merge it by hand, then resume)");
  if (merged->kind == git::MergeOutcome::Kind::conflict)
    co_return make_error(ErrorCode::conflict,
                         base + " conflicts with " + git::integration_branch(plan.id) +
                             " (merge it by hand, then `loopr resume " + plan.id + "`)");
  // The old result goes in the same write as the plan's resume: nothing reads it as current.
  const std::string cleared = to_json(BaselineState{}).dump();
  auto stored =
      co_await s->journal.edit(plan.id, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
        if (!baseline_blocked(l)) return not_allowed(l, "it is not blocked by its baseline check");
        if (!engine::transition(l, LoopStatus::complete, EndReason::approved,
                                "resumed by the user: the baseline is checked again", w.events))
          return not_allowed(l, "cannot resume");
        w.meta.emplace_back(baseline_state_key(l.id), cleared);
        return std::nullopt;
      });
  if (!stored) co_return stored.take_error();
  s->baseline_waiters.insert(plan.id);
  start_baseline(s, plan.id);
  if (!s->baselines.count(plan.id)) {  // no check started (`baseline: off` now): on at once
    s->baseline_waiters.erase(plan.id);
    net::co_spawn(s->ctx.io, on_complete(s, plan.id), net::detached);
  }
  co_return *stored;
}

}  // namespace loopr::manager
