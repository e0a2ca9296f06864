// The baseline check (src/manager/README.md): when a plan is submitted, the project's `setup:`
// and loops.code.validation run in a fresh worktree of its integration branch (the base branch's
// tip), in the sandbox, exactly as in a code loop's worktree, while the plan is being written.
// Its result is stored in the plan's marks (shown at the gate) and under a meta key per commit
// and config (another plan on the same commit reuses it). The plan's children are made only
// after it: a failure under `baseline: block` blocks the plan before any code loop runs.
#include <spdlog/spdlog.h>

#include <fstream>

#include <loopr/engine/code_check.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/engine/test_output.hpp>
#include <loopr/engine/worktree_setup.hpp>
#include <loopr/git/branches.hpp>

#include "manager/driver.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {

using engine::make_event;

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
};

nlohmann::json to_json(const BaselineRun& r) {
  return {{"passed", r.passed},    {"sha", r.sha}, {"summary", r.summary},
          {"output", r.output},    {"log", r.log}, {"duration_ms", r.duration_ms},
          {"setup_ms", r.setup_ms}};
}

BaselineRun from_json(const nlohmann::json& j) {
  BaselineRun r;
  r.passed = j.value("passed", false);
  r.sha = j.value("sha", "");
  r.summary = j.value("summary", "");
  r.output = j.value("output", "");
  r.log = j.value("log", "");
  r.duration_ms = j.value("duration_ms", std::int64_t{0});
  r.setup_ms = j.value("setup_ms", std::int64_t{0});
  return r;
}

std::string seconds(std::int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000);
  return buf;
}

// `.loopr/logs/loops/<plan>/baseline-<sha12>.log`, relative to the repository.
std::string write_log(const RepoPaths& paths, const std::string& plan, const std::string& sha,
                      const std::string& text) {
  std::error_code ec;
  auto dir = paths.loop_log_dir(plan);
  std::filesystem::create_directories(dir, ec);
  auto file = dir / ("baseline-" + sha.substr(0, 12) + ".log");
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out || ec) spdlog::warn("plan {}: cannot write {}", plan, file.string());
  return std::filesystem::relative(file, paths.root, ec).string();
}

// Setup and validation in a fresh worktree of the plan's integration tip.
awaitable<BaselineRun> run_check(ManagerState& s, const std::string& plan) {
  BaselineRun r;
  auto prepare = [wt = s.worktrees, plan] { return wt.prepare_baseline(plan); };
  auto checkout = co_await run_blocking(s.ctx.pool, prepare);
  if (!checkout) {
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
    text += "$ " + check.command + "\n" + check.output + "\n";
  }
  r.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  text += "# " + r.summary + "\n";
  auto finish = [wt = s.worktrees, plan, paths = s.ctx.paths, sha = r.sha, text] {
    if (auto removed = wt.remove_baseline(plan); !removed)
      spdlog::warn("plan {}: the baseline check's worktree stays: {}", plan,
                   removed.error().message);
    return write_log(paths, plan, sha, text);
  };
  r.log = co_await run_blocking(s.ctx.pool, finish);
  co_return r;
}

void record(Loop& plan, const BaselineRun& r) {
  auto& t = plan.tree;
  t.baseline_sha = r.sha;
  t.baseline_result = r.passed ? "passed" : r.could_not_start ? "unavailable" : "failed";
  t.baseline_summary = r.summary;
  t.baseline_output = gate_output_tail(r.output);
  t.baseline_log = r.log;
  t.baseline_ms = r.duration_ms;
  t.baseline_setup_ms = r.setup_ms;
  t.baseline_fingerprint =
      r.passed || r.could_not_start ? "" : engine::output_fingerprint(r.output);
}

Event check_event(const std::string& plan, const BaselineRun& r, bool reused) {
  return make_event(plan, "baseline_check",
                    {{"sha", r.sha},
                     {"passed", r.passed},
                     {"summary", r.summary},
                     {"duration_ms", r.duration_ms},
                     {"setup_ms", r.setup_ms},
                     {"log", r.log},
                     {"reused", reused}});
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
  if (!tip) co_return;  // the plan's branches are gone: nothing to check
  const std::string key = baseline_meta_key(*tip, *config);
  std::optional<BaselineRun> result;
  bool reused = false;
  if (auto cached = s->journal.store().get_meta(key); cached && *cached) {
    auto j = nlohmann::json::parse(**cached, nullptr, false);
    if (j.is_object() && j.value("passed", false)) {  // a failure is always checked again
      result = from_json(j);
      reused = true;
    }
  }
  if (!result) {
    co_await s->journal.edit(plan, [&](Loop& l, WriteSet&) -> std::optional<Error> {
      l.tree.baseline_result = "checking";
      l.tree.baseline_sha = *tip;
      return std::nullopt;
    });
    spdlog::info("plan {}: baseline check of {} started", plan, tip->substr(0, 12));
    result = co_await run_check(*s, plan);
    if (result->stopped || s->stopping) co_return;  // runs again at the next start
  }
  spdlog::info("plan {}: baseline {} in {}: {}", plan, result->passed ? "passed" : "failed",
               seconds(result->duration_ms), result->summary);
  auto stored = co_await s->journal.edit(plan, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    record(l, *result);
    w.events.push_back(check_event(plan, *result, reused));
    if (!reused && !result->could_not_start) w.meta.emplace_back(key, to_json(*result).dump());
    return std::nullopt;
  });
  if (!stored) co_return;
  // A plan approved meanwhile waits for this to make its children (or to be blocked).
  if (stored->type == LoopType::plan && stored->status == LoopStatus::complete && !spawned(*stored))
    net::co_spawn(s->ctx.io, finish_loop(s, plan), net::detached);
}

}  // namespace

void start_baseline(const State& s, const std::string& plan) {
  if (s->stopping || s->ctx.config->baseline == BaselineMode::off) return;
  if (!s->baselines.insert(plan).second) return;  // one under way
  net::co_spawn(s->ctx.io, check_baseline(s, plan), net::detached);
}

awaitable<bool> baseline_ready(State s, Loop& plan) {
  BaselineStep step = baseline_step(plan, s->ctx.config->baseline, s->baselines.count(plan.id) > 0);
  if (step == BaselineStep::proceed) co_return true;
  if (step == BaselineStep::check) start_baseline(s, plan.id);
  if (step != BaselineStep::block) co_return false;
  const std::string why = baseline_block_reason(plan, s->ctx.config->base_branch);
  spdlog::warn("plan {} is blocked: its baseline check failed: {}", plan.id,
               plan.tree.baseline_summary);
  auto blocked = co_await s->journal.save_status(plan, LoopStatus::blocked,
                                                 EndReason::baseline_failed, why, {});
  if (blocked) plan = std::move(*blocked);
  co_return false;
}

awaitable<ActionResult> resume_baseline(State s, Loop plan) {
  const std::string base = s->ctx.config->base_branch;
  auto update = [wt = s->worktrees, id = plan.id, base] {
    return wt.update_from_base(id, base, "loopr(" + id + "): update from " + base);
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
  auto stored =
      co_await s->journal.edit(plan.id, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
        if (!baseline_blocked(l)) return not_allowed(l, "it is not blocked by its baseline check");
        l.tree.baseline_result.clear();
        if (!engine::transition(l, LoopStatus::complete, EndReason::approved,
                                "resumed by the user: the baseline is checked again", w.events))
          return not_allowed(l, "cannot resume");
        return std::nullopt;
      });
  if (!stored) co_return stored.take_error();
  start_baseline(s, plan.id);
  co_return *stored;
}

}  // namespace loopr::manager
