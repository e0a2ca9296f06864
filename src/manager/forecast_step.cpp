// The forecast step: a plan that reaches the gate (`awaiting_approval`) gets its forecast made
// and stored (manager/forecast.hpp) with a `forecast` event for logs and notify commands, in
// one write through the journal (the API's reads never store it).
#include <spdlog/spdlog.h>

#include <loopr/api/events.hpp>
#include <loopr/manager/forecast.hpp>

#include "manager/driver.hpp"

namespace loopr::manager {

awaitable<void> forecast_at_gate(State s, Loop plan) {
  // The tree's limits: the request's own (submit --max-cost …) in place of the config's.
  std::shared_ptr<const Config> config = tree_config(s->ctx.config, plan.tree.budget);
  TaskStore& store = s->journal.store();
  bool fresh = false;
  auto make = [&store, plan, config, &fresh] { return forecast_for(store, plan, *config, &fresh); };
  std::optional<Forecast> f = co_await run_blocking(s->ctx.pool, make);
  if (!f) {
    spdlog::warn("plan {}: no forecast (its artifact cannot be read)", plan.id);
    co_return;
  }
  WriteSet set;
  if (fresh) set.meta.emplace_back(forecast_key(plan.id), to_json(*f).dump());
  set.events.push_back(api::encode(plan.id, forecast_event(*f, config->limits.max_cost_usd)));
  auto stored = co_await s->journal.commit(std::move(set));
  if (!stored) spdlog::warn("plan {}: storing its forecast: {}", plan.id, stored.error().message);
}

}  // namespace loopr::manager
