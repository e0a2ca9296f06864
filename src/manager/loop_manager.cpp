// LoopManager: the facade over the driver (driver.hpp) and the tree's rules (tree_rules.hpp).
// src/manager/README.md says how the pieces fit.
#include <loopr/manager/loop_manager.hpp>

#include "manager/driver.hpp"
#include "manager/pull_request.hpp"

namespace loopr::manager {

struct LoopManager::Impl {
  State state;
};

LoopManager::LoopManager(engine::EngineContext& ctx)
    : impl_(std::make_shared<Impl>(Impl{std::make_shared<ManagerState>(ctx)})) {}

LoopManager::~LoopManager() { impl_->state->stopping = true; }

awaitable<Result<void>> LoopManager::start() { return manager::start(impl_->state); }
awaitable<ActionResult> LoopManager::submit(std::string request, bool dry_run,
                                            RequestBudget budget) {
  return manager::submit(impl_->state, std::move(request), dry_run, budget);
}
awaitable<ActionResult> LoopManager::approve(std::string id) {
  return decide(impl_->state, std::move(id), true, "");
}
awaitable<ActionResult> LoopManager::reject(std::string id, std::string reason) {
  return decide(impl_->state, std::move(id), false, std::move(reason));
}
awaitable<ActionResult> LoopManager::iterate(std::string id, std::string feedback) {
  return manager::iterate(impl_->state, std::move(id), std::move(feedback));
}
awaitable<ActionResult> LoopManager::pause(std::string id) {
  return manager::pause(impl_->state, std::move(id));
}
awaitable<ActionResult> LoopManager::resume(std::string id, RequestBudget raised) {
  return manager::resume(impl_->state, std::move(id), raised);
}
awaitable<ActionResult> LoopManager::stop(std::string id) {
  return manager::stop(impl_->state, std::move(id));
}
awaitable<ActionResult> LoopManager::answer(std::string id, std::string text) {
  return manager::answer(impl_->state, std::move(id), std::move(text));
}
awaitable<Result<MergeInfo>> LoopManager::merge(std::string plan_id, bool force) {
  return manager::merge(impl_->state, std::move(plan_id), force);
}
awaitable<ActionResult> LoopManager::iterate_from_pr(std::string plan_id) {
  return manager::iterate_from_pr(impl_->state, std::move(plan_id));
}
awaitable<Result<std::vector<forge::ReviewComment>>> LoopManager::pr_comments(std::string plan_id) {
  return new_pr_comments(impl_->state, std::move(plan_id));
}
void LoopManager::refresh_pr(std::string plan_id) { refresh_pr_soon(impl_->state, plan_id); }
void LoopManager::set_forge_token(std::string token) {
  impl_->state->forge_token = std::move(token);
}
awaitable<DiskStatus> LoopManager::watch_disk() { return manager::watch_disk(impl_->state); }
awaitable<GcReport> LoopManager::gc(GcOptions options) {
  return manager::gc(impl_->state, std::move(options));
}
awaitable<void> LoopManager::shutdown(std::chrono::milliseconds grace,
                                      std::chrono::milliseconds drain) {
  return manager::shutdown(impl_->state, grace, drain);
}
void LoopManager::cut_drain_short() { manager::cut_drain_short(*impl_->state); }
bool LoopManager::draining() const { return impl_->state->draining; }
std::size_t LoopManager::active_runs() const { return impl_->state->runs.size(); }
double LoopManager::tree_cost(const std::string& plan_id) const {
  return impl_->state->ctx.costs.total(plan_id);
}
void LoopManager::config_changed() {
  impl_->state->runs.slots().set_capacity(impl_->state->ctx.config->concurrency.max_loops);
}

}  // namespace loopr::manager
