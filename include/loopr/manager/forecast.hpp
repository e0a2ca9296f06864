// A forecast at the gate: what a plan's tree will likely cost, how many loops and model calls it
// makes and how long it runs, from the plan (its number of specs) and this repository's history
// (medians per loop type of finished loops of other trees), or built-in defaults without one.
// Made when the plan reaches `awaiting_approval`, kept in the store (meta `forecast/<plan>`), and
// compared with what the tree really spent once it ended.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/store/task_store.hpp>

namespace loopr::api {
struct ForecastMade;
}

namespace loopr::manager {

/// What one finished loop of an earlier tree cost and took.
struct LoopSample {
  LoopType type = LoopType::code;
  double cost_usd = 0;
  int iterations = 0;
  int model_calls = 0;
  std::int64_t duration_ms = 0;  ///< its iterations' time, summed
  int children = -1;             ///< specs: phases made from it (-1: not a spec)
  /// Its tokens (cache reads and writes apart), so the forecast prices them with the model its
  /// type uses now; all zero for a sample that only knows its cost.
  Usage usage;
};

/// The price of `usage` with the model loop type `type` uses (loops.<type>.model); negative:
/// no price known (the sample's recorded cost counts).
using SamplePrice = std::function<double(LoopType type, const Usage& usage)>;

/// The SamplePrice of a config: its `pricing` table and each type's model.
SamplePrice config_sample_price(const Config& config);

struct Forecast {
  double cost_usd = 0;  ///< the likely total, the plan's own spending included
  double low = 0;
  double high = 0;
  int loops = 0;  ///< loops of the whole tree, the plan included
  int specs = 0;
  int phases = 0;  ///< estimated (phases per spec from history, else 3)
  int model_calls = 0;
  std::int64_t duration_ms = 0;  ///< wall time after approval, siblings side by side
  std::string basis;             ///< what it is based on, in words
  int plan_iteration = 0;        ///< the plan iteration it was made for
  TimestampMs made_at = 0;
};

nlohmann::json to_json(const Forecast& f);
/// The `forecast` event of `f` at the gate, against the tree's limit (`over_limit`: its high end
/// is over it).
api::ForecastMade forecast_event(const Forecast& f, double max_cost_usd);
std::optional<Forecast> forecast_from_json(const nlohmann::json& j);

/// The pure estimate: `specs` specs, the plan's own cost so far, and the samples.
/// With `price`, each sample (and each built-in default) costs its tokens at the type's model.
Forecast make_forecast(int specs, double plan_cost, std::span<const LoopSample> history,
                       const SamplePrice& price = {});

/// Samples of finished (complete) loops of other trees than `plan_id` (at most the 50 newest
/// per type). Blocking.
std::vector<LoopSample> history_samples(const TaskStore& store, const std::string& plan_id);

/// The forecast of `plan`: the stored one; when it waits at the gate and none was stored for its
/// current iteration, one made from its artifact (not stored: reads never write; the manager
/// stores it through the journal when the plan reaches the gate). nullopt: none (not a plan,
/// never at the gate, or its artifact cannot be read). `fresh` says it was made now. Blocking.
std::optional<Forecast> forecast_for(const TaskStore& store, const Loop& plan, const Config& config,
                                     bool* fresh = nullptr);

/// What the tree really spent (for a plan whose tree ended): cost (every loop, invalidated ones
/// too: their tokens were spent), loops (not invalidated), model calls, wall time after approval.
nlohmann::json actual_json(const TaskStore& store, const Loop& plan);

/// The store key of a plan's forecast.
std::string forecast_key(const std::string& plan_id);

}  // namespace loopr::manager
