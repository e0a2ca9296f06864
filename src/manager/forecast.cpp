#include <algorithm>
#include <cmath>
#include <map>

#include <loopr/api/events.hpp>
#include <loopr/core/text.hpp>
#include <loopr/git/artifact.hpp>
#include <loopr/llm/pricing.hpp>
#include <loopr/manager/forecast.hpp>
#include <loopr/markdown/artifacts.hpp>

namespace loopr::manager {
namespace {

// Built-in costs per loop when the repository has no finished loop of a type yet.
// The tokens are what those costs buy at claude-sonnet-5-5's prices, so another model per type
// (loops.<type>.model) scales them.
LoopSample default_sample(LoopType type) {
  auto tokens = [](std::int64_t in, std::int64_t out) {
    Usage u;
    u.input_tokens = in;
    u.output_tokens = out;
    return u;
  };
  switch (type) {
    case LoopType::plan:
      return {type, 0.05, 1, 3, 60'000, -1, tokens(15'000, 2'000)};
    case LoopType::spec:
      return {type, 0.05, 1, 3, 60'000, 3, tokens(15'000, 2'000)};
    case LoopType::phase:
      return {type, 0.03, 1, 2, 45'000, -1, tokens(10'000, 1'000)};
    case LoopType::code:
      break;
  }
  return {LoopType::code, 0.40, 3, 30, 600'000, -1, tokens(150'000, 10'000)};
}

// A sample's cost at the model its type uses now (its recorded cost without tokens or price).
double priced(const LoopSample& s, const SamplePrice& price) {
  const Usage& u = s.usage;
  if (!price || u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens == 0)
    return s.cost_usd;
  double usd = price(s.type, u);
  return usd >= 0 ? usd : s.cost_usd;
}
constexpr int kDefaultPhasesPerSpec = 3;
constexpr std::size_t kSamplesPerType = 50;

// Nearest-rank percentile of a sorted list (q in [0, 1]).
template <typename T>
T percentile(const std::vector<T>& sorted, double q) {
  std::size_t rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double round_cents(double usd) { return std::round(usd * 100.0) / 100.0; }

}  // namespace

std::string forecast_key(const std::string& plan_id) { return "forecast/" + plan_id; }

api::ForecastMade forecast_event(const Forecast& f, double max_cost_usd) {
  api::ForecastMade e{round_cents(f.cost_usd),
                      round_cents(f.low),
                      round_cents(f.high),
                      f.loops,
                      f.basis,
                      max_cost_usd,
                      max_cost_usd > 0 && f.high > max_cost_usd};
  e.rest = {{"specs", f.specs},
            {"phases", f.phases},
            {"model_calls", f.model_calls},
            {"duration_ms", f.duration_ms},
            {"plan_iteration", f.plan_iteration},
            {"made_at", format_timestamp(f.made_at)}};
  return e;
}

// The stored forecast: the event's fields without the tree's limit.
nlohmann::json to_json(const Forecast& f) {
  nlohmann::json j = api::encode_body(forecast_event(f, 0));
  j.erase("max_cost_usd");
  j.erase("over_limit");
  return j;
}

std::optional<Forecast> forecast_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("cost_usd") || !j["cost_usd"].is_number()) return std::nullopt;
  Forecast f;
  f.cost_usd = j.value("cost_usd", 0.0);
  f.low = j.value("low", 0.0);
  f.high = j.value("high", 0.0);
  f.loops = j.value("loops", 0);
  f.basis = j.value("basis", "");
  f.specs = j.value("specs", 0);
  f.phases = j.value("phases", 0);
  f.model_calls = j.value("model_calls", 0);
  f.duration_ms = j.value("duration_ms", std::int64_t{0});
  f.plan_iteration = j.value("plan_iteration", 0);
  f.made_at = parse_timestamp(j.value("made_at", "")).value_or(0);
  return f;
}

SamplePrice config_sample_price(const Config& config) {
  auto pricing = std::make_shared<const llm::Pricing>(config.pricing);
  std::map<LoopType, std::string> models;
  for (LoopType t : kAllLoopTypes) models[t] = config.model_for(to_string(t));
  return [pricing, models](LoopType type, const Usage& usage) -> double {
    const Price* p = pricing->find(models.at(type));
    return p ? llm::cost_usd(*p, usage) : -1.0;
  };
}

Forecast make_forecast(int specs, double plan_cost, std::span<const LoopSample> history,
                       const SamplePrice& price) {
  Forecast f;
  f.specs = specs;
  std::map<LoopType, int> seen;
  for (const auto& s : history) ++seen[s.type];

  // Phases per spec: the median of earlier specs, else the default.
  std::vector<int> children;
  for (const auto& s : history)
    if (s.type == LoopType::spec && s.children >= 0) children.push_back(s.children);
  std::sort(children.begin(), children.end());
  int per_spec = children.empty() ? kDefaultPhasesPerSpec : std::max(1, percentile(children, 0.5));
  f.phases = specs * per_spec;
  const std::map<LoopType, int> count = {
      {LoopType::spec, specs}, {LoopType::phase, f.phases}, {LoopType::code, f.phases}};
  f.loops = 1 + specs + 2 * f.phases;

  f.cost_usd = f.low = f.high = plan_cost;
  for (const auto& [type, n] : count) {
    std::vector<double> costs;
    std::vector<int> calls;
    std::vector<std::int64_t> durations;
    for (const auto& s : history) {
      if (s.type != type) continue;
      costs.push_back(priced(s, price));
      calls.push_back(s.model_calls);
      durations.push_back(s.duration_ms);
    }
    if (costs.empty()) {
      // No history for this type: the default, and a wide range around it.
      LoopSample d = default_sample(type);
      d.cost_usd = priced(d, price);
      f.cost_usd += n * d.cost_usd;
      f.low += n * d.cost_usd * 0.5;
      f.high += n * d.cost_usd * 2.0;
      f.model_calls += n * d.model_calls;
      if (n > 0) f.duration_ms += d.duration_ms;
      continue;
    }
    std::sort(costs.begin(), costs.end());
    std::sort(calls.begin(), calls.end());
    std::sort(durations.begin(), durations.end());
    double median = percentile(costs, 0.5);
    f.cost_usd += n * median;
    f.low += n * percentile(costs, 0.25);
    f.high += n * std::max(percentile(costs, 0.9), 1.5 * median);
    f.model_calls += n * percentile(calls, 0.5);
    if (n > 0) f.duration_ms += percentile(durations, 0.5);  // siblings run side by side
  }
  int total = 0;
  for (const auto& [type, n] : seen) total += type == LoopType::plan ? 0 : n;
  if (total == 0) {
    f.basis = "built-in defaults (no finished loops in this repository yet)";
  } else {
    std::string parts;
    for (LoopType t : {LoopType::spec, LoopType::phase, LoopType::code}) {
      auto it = seen.find(t);
      parts += (parts.empty() ? "" : ", ") + std::to_string(it == seen.end() ? 0 : it->second) +
               " " + to_string(t);
    }
    f.basis = "history: medians of " + std::to_string(total) + " finished loops (" + parts +
              "); built-in defaults where a type has none";
  }
  return f;
}

std::vector<LoopSample> history_samples(const TaskStore& store, const std::string& plan_id) {
  // Two passes over the store's kept summaries that copy none of them (a daemon that ran a
  // thousand trees holds ~4,000: a copy of all, once per tree, was a growing transient block).
  // Each pass is the filtered listing with a predicate that keeps nothing: it sees every summary
  // under the store's read lock and calls nothing back. The first keeps the kSamplesPerType
  // newest finished loops of each type, as the few fields a sample needs; the second counts the
  // phases of the picked specs.
  struct Pick {
    TimestampMs at = 0;
    std::string id;
    LoopType type = LoopType::code;
    Usage usage;
    int iterations = 0;
  };
  auto newer = [](const Pick& a, const Pick& b) {  // newest first; ids settle equal times
    return a.at != b.at ? a.at > b.at : a.id > b.id;
  };
  std::map<LoopType, std::vector<Pick>> newest;  // per type: a heap whose top is the oldest kept
  auto pick = [&](const Loop& l) {
    if (l.status != LoopStatus::complete || l.plan_id == plan_id || l.type == LoopType::plan)
      return false;
    auto& heap = newest[l.type];
    Pick p{l.updated_at, {}, l.type, l.usage, l.iteration};
    if (heap.size() == kSamplesPerType && !newer(p, heap.front())) return false;
    p.id = l.id;
    heap.push_back(std::move(p));
    std::push_heap(heap.begin(), heap.end(), newer);
    if (heap.size() > kSamplesPerType) {
      std::pop_heap(heap.begin(), heap.end(), newer);
      heap.pop_back();
    }
    return false;
  };
  if (!store.list_loop_summaries(pick)) return {};
  std::map<std::string, int, std::less<>> phases_of;  // picked spec id → its phases
  if (auto it = newest.find(LoopType::spec); it != newest.end())
    for (const Pick& p : it->second) phases_of.emplace(p.id, 0);
  if (!phases_of.empty()) {
    auto count = [&](const Loop& l) {
      if (l.type != LoopType::phase || l.status == LoopStatus::invalidated) return false;
      if (auto it = phases_of.find(l.parent_id); it != phases_of.end()) ++it->second;
      return false;
    };
    if (!store.list_loop_summaries(count)) return {};
  }
  std::vector<Pick> picked;
  for (auto& [type, heap] : newest)
    for (Pick& p : heap) picked.push_back(std::move(p));
  std::sort(picked.begin(), picked.end(), newer);
  std::vector<LoopSample> out;
  out.reserve(picked.size());
  for (const Pick& p : picked) {
    LoopSample s;
    s.type = p.type;
    s.cost_usd = p.usage.cost_usd;
    s.usage = p.usage;
    s.iterations = p.iterations;
    if (p.type == LoopType::spec) s.children = phases_of[p.id];
    if (auto its = store.iterations(p.id))
      for (const auto& it : *its) {
        s.duration_ms += it.duration_ms;
        s.model_calls += it.details.turns;
      }
    out.push_back(s);
  }
  return out;
}

std::optional<Forecast> forecast_for(const TaskStore& store, const Loop& plan, const Config& config,
                                     bool* fresh) {
  if (fresh) *fresh = false;
  if (plan.type != LoopType::plan) return std::nullopt;
  std::optional<Forecast> stored;
  if (auto text = store.get_meta(forecast_key(plan.id)); text && *text) {
    auto j = nlohmann::json::parse(**text, nullptr, false);
    stored = forecast_from_json(j);
  }
  bool current = stored && stored->plan_iteration == plan.iteration;
  if (plan.status != LoopStatus::awaiting_approval || current) return stored;
  if (plan.output_artifacts.empty() || plan.worktree.empty()) return stored;
  // The plan in the worktree as the format check read it, through the one artifact reader: the
  // model may have made it a FIFO (which would hold this pool thread for good) or a symlink.
  auto text = git::read_loop_artifact({{}, plan.worktree, plan.output_artifacts.front(), {}},
                                      git::format_check_bytes(config.artifacts.max_bytes));
  if (!text.bytes) return stored;
  auto doc = markdown::read_plan(*text.bytes, plan.output_artifacts.front(), config.artifacts);
  if (!doc) return stored;
  auto samples = history_samples(store, plan.id);
  Forecast f = make_forecast(static_cast<int>(doc->specs.size()), plan.usage.cost_usd, samples,
                             config_sample_price(config));
  f.plan_iteration = plan.iteration;
  f.made_at = now_ms();
  if (fresh) *fresh = true;
  return f;
}

nlohmann::json actual_json(const TaskStore& store, const Loop& plan) {
  double cost = 0;
  int loops = 0, calls = 0;
  TimestampMs last = plan.updated_at;
  auto tree = store.loops_of_plan(plan.id);
  if (tree)
    for (const auto& l : *tree) {
      cost += l.usage.cost_usd;
      if (l.status == LoopStatus::invalidated) continue;
      ++loops;
      last = std::max(last, l.updated_at);
      if (auto its = store.iterations(l.id))
        for (const auto& it : *its) calls += it.details.turns;
    }
  TimestampMs approved = plan.updated_at;
  if (auto a = store.get_approval(plan.id); a && *a) approved = (*a)->at;
  return {{"cost_usd", round_cents(cost)},
          {"loops", loops},
          {"model_calls", calls},
          {"duration_ms", std::max<TimestampMs>(0, last - approved)}};
}

}  // namespace loopr::manager
