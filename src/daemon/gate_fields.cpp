// The fields coordination adds to the API's loops: a loop's open question (and its answer),
// and a plan's forecast (made at the gate) with, once its tree ended, what it really spent.
#include <loopr/core/budget.hpp>
#include <loopr/manager/forecast.hpp>
#include <loopr/manager/tree_verdict.hpp>

#include "daemon/api.hpp"

namespace loopr::daemon {

void add_question_fields(nlohmann::json& j, const Loop& loop) {
  std::string question = loop.run.question;
  // Listings carry no run marks; a waiting loop's status reason is its question.
  if (question.empty() && loop.status == LoopStatus::awaiting_answer) question = loop.status_reason;
  if (question.empty()) return;
  j["question"] = question;
  j["answer"] = loop.run.answer.empty() ? nlohmann::json(nullptr) : nlohmann::json(loop.run.answer);
}

nlohmann::json plan_gate_fields(const TaskStore& store, const Loop& plan, std::span<const Loop> tree,
                                const Config& file_config) {
  nlohmann::json out = nlohmann::json::object();
  // The request's own limits (submit --max-cost …), in place of the config's for this tree.
  const RequestBudget& b = plan.tree.budget;
  const Config config = with_budget(file_config, b);
  if (b.any())
    out["budget"] = {{"max_cost_usd", b.max_cost_usd > 0 ? nlohmann::json(b.max_cost_usd) : nullptr},
                     {"max_runtime", b.max_runtime.count() > 0
                                         ? nlohmann::json(format_duration(b.max_runtime))
                                         : nullptr},
                     {"max_iterations", b.max_iterations > 0 ? nlohmann::json(b.max_iterations)
                                                             : nullptr}};
  auto f = manager::forecast_for(store, plan, config);
  if (!f) return out;
  nlohmann::json fj = manager::to_json(*f);
  fj["max_cost_usd"] = config.limits.max_cost_usd;
  fj["over_limit"] = config.limits.max_cost_usd > 0 && f->high > config.limits.max_cost_usd;
  fj["max_cost_source"] = cost_limit_source(b);
  out["forecast"] = std::move(fj);
  auto verdict = manager::tree_verdict(tree, plan.id, config.merge);
  // Ended: nothing more runs (the integration check included) unless a person acts.
  if (verdict != manager::TreeVerdict::running && verdict != manager::TreeVerdict::validating &&
      plan.status != LoopStatus::awaiting_approval)
    out["actual"] = manager::actual_json(store, plan);
  return out;
}

}  // namespace loopr::daemon
