// The API's loop rows as the daemon makes them from stored loops (typed: include/loopr/api/):
// the row with its open question, a plan's tree fields, and a plan's forecast (made at the gate)
// with, once its tree ended, what it really spent.
#include <spdlog/spdlog.h>

#include <loopr/core/budget.hpp>
#include <loopr/manager/baseline_state.hpp>
#include <loopr/manager/forecast.hpp>
#include <loopr/manager/stats.hpp>
#include <loopr/manager/tree_verdict.hpp>

#include "daemon/api.hpp"

namespace loopr::daemon {

std::string open_question(const Loop& loop) {
  if (!loop.run.question.empty()) return loop.run.question;
  return loop.status == LoopStatus::awaiting_answer ? loop.status_reason : std::string();
}

api::LoopRow loop_row(const Loop& loop) {
  api::LoopRow row = api::row_of(loop);
  if (std::string question = open_question(loop); !question.empty()) {
    row.question = std::move(question);
    if (!loop.run.answer.empty()) row.answer = loop.run.answer;
  }
  return row;
}

nlohmann::json loop_json(const Loop& loop) { return api::to_json(loop_row(loop)); }

void add_question_fields(nlohmann::json& j, const Loop& loop) {
  std::string question = open_question(loop);
  if (question.empty()) return;
  j["question"] = question;
  j["answer"] = loop.run.answer.empty() ? nlohmann::json(nullptr) : nlohmann::json(loop.run.answer);
}

void add_tree_fields(api::LoopRow& row, const Loop& plan, std::span<const Loop> tree,
                     MergeMode mode, const manager::BaselineState& baseline) {
  row.tree_verdict = manager::tree_verdict(tree, plan.id, mode);
  row.base_branch = plan.tree.base_branch;
  row.merged_into_base = plan.tree.merged_into_base;
  row.merge_error = plan.tree.merge_error;
  // The integration gate: the last check of the integration tip (null before the first).
  if (plan.tree.gate_result != GateResult::none)
    row.integration = api::IntegrationView{to_string(plan.tree.gate_result), plan.tree.gate_sha,
                                           plan.tree.gate_summary, plan.tree.gate_output,
                                           plan.tree.gate_log, plan.tree.gate_fixes};
  // merge: pr: the pull request (null until one was opened or a push failed).
  if (const TreeMarks& t = plan.tree; t.pr_number > 0 || !t.pr_error.empty())
    row.pr = api::PrView{t.pr_number, t.pr_url,     t.pr_state, t.pr_checks,
                         t.pr_head,   t.pr_failing, t.pr_error, t.ci_fixes};
  // The baseline check: the tests on the integration branch before any code loop (null: none).
  if (const auto& b = baseline; b.result != manager::BaselineResult::none)
    row.baseline =
        api::BaselineView{to_string(b.result), b.sha, b.summary, b.output, b.log, b.ms, b.setup_ms, b.outputs};
}

void add_gate_fields(api::LoopDetail& d, const TaskStore& store, const Loop& plan,
                     std::span<const Loop> tree, const Config& file_config) {
  // The request's own limits (submit --max-cost …), in place of the config's for this tree.
  const RequestBudget& b = plan.tree.budget;
  const Config config = with_budget(file_config, b);
  if (b.any()) {
    api::BudgetView v;
    if (b.max_cost_usd > 0) v.max_cost_usd = b.max_cost_usd;
    if (b.max_runtime.count() > 0) v.max_runtime = format_duration(b.max_runtime);
    if (b.max_iterations > 0) v.max_iterations = b.max_iterations;
    d.budget = v;
  }
  auto f = manager::forecast_for(store, plan, config);
  if (!f) return;
  // The manager's own JSON (its rounding included) is the forecast's one spelling.
  d.forecast = api::forecast_from_json(manager::to_json(*f));
  d.forecast->max_cost_usd = config.limits.max_cost_usd;
  d.forecast->over_limit = config.limits.max_cost_usd > 0 && f->high > config.limits.max_cost_usd;
  d.forecast->max_cost_source = cost_limit_source(b);
  auto verdict = manager::tree_verdict(tree, plan.id, config.merge);
  // Ended: nothing more runs (the integration check included) unless a person acts.
  if (verdict != manager::TreeVerdict::running && verdict != manager::TreeVerdict::validating &&
      plan.status != LoopStatus::awaiting_approval)
    d.actual = api::actual_from_json(manager::actual_json(store, plan));
}

void add_usage_fields(api::LoopRow& row, const TaskStore& store, const Loop& loop,
                      const std::vector<IterationRecord>& iterations, std::span<const Loop> tree,
                      MergeMode mode) {
  // `loopr stats`'s sums (its rule for spending no record holds included), over one loop and
  // over the plan's tree. Figures to show: a record they cannot read leaves them out, never the
  // loop's detail.
  const TimestampMs now = now_ms();
  try {
    const manager::Stats own = manager::compute_stats(std::span<const Loop>(&loop, 1),
                                                      {{loop.id, iterations}}, 0, now, mode);
    row.uncached_cost_usd = own.total.uncached_cost_usd;
    if (loop.type != LoopType::plan) return;
    std::map<std::string, std::vector<IterationRecord>> iterations_of;
    for (const Loop& l : tree) {
      if (l.id == loop.id) {
        iterations_of[l.id] = iterations;
        continue;
      }
      auto records = store.iterations(l.id);
      if (!records) {
        spdlog::warn("plan {}: the tree's usage without loop {}: {}", loop.id, l.id,
                     records.error().message);
        return;
      }
      iterations_of[l.id] = std::move(*records);
    }
    const manager::Stats all = manager::compute_stats(tree, iterations_of, 0, now, mode);
    const Usage& u = all.total.usage;
    row.tree_usage = api::TreeUsageView{u.input_tokens, u.output_tokens, u.cache_read_tokens,
                                        u.cache_write_tokens, all.total.uncached_cost_usd};
  } catch (const std::exception& e) {
    spdlog::warn("loop {}: its usage figures: {}", loop.id, e.what());
  }
}

}  // namespace loopr::daemon
