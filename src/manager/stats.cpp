#include <algorithm>

#include <loopr/manager/stats.hpp>

#include <loopr/api/maintenance.hpp>
#include <loopr/api/usage_fields.hpp>
#include <loopr/api/views.hpp>
#include <loopr/manager/tree_verdict.hpp>

namespace loopr::manager {
namespace {

// What a loop spent beyond its iteration records (model calls that failed for good, a check
// that could not start): never negative.
Usage unrecorded(const Loop& loop, const Usage& recorded) {
  auto rest = [](auto total, auto part) { return std::max<decltype(total)>(0, total - part); };
  Usage u;
  u.input_tokens = rest(loop.usage.input_tokens, recorded.input_tokens);
  u.output_tokens = rest(loop.usage.output_tokens, recorded.output_tokens);
  u.cache_read_tokens = rest(loop.usage.cache_read_tokens, recorded.cache_read_tokens);
  u.cache_write_tokens = rest(loop.usage.cache_write_tokens, recorded.cache_write_tokens);
  u.cost_usd = std::max(0.0, loop.usage.cost_usd - recorded.cost_usd);
  return u;
}

void add(SpendStats& to, const SpendStats& from) {
  to.usage += from.usage;
  to.uncached_cost_usd += from.uncached_cost_usd;
  to.model_calls += from.model_calls;
  to.iterations += from.iterations;
  to.iteration_ms += from.iteration_ms;
  for (const auto& [status, n] : from.loops) to.loops[status] += n;
}

// Time covered by the intervals, overlaps counted once.
std::int64_t covered(std::vector<std::pair<TimestampMs, TimestampMs>> spans) {
  std::sort(spans.begin(), spans.end());
  std::int64_t sum = 0;
  TimestampMs end = 0;
  for (auto [a, b] : spans) {
    a = std::max(a, end);
    if (b > a) sum += b - a;
    end = std::max(end, b);
  }
  return sum;
}

bool at_work(TreeVerdict v) {
  return v == TreeVerdict::running || v == TreeVerdict::validating || v == TreeVerdict::merging;
}

api::SpendView spend_view(const SpendStats& s) {
  api::SpendView v;
  v.id = s.id;
  if (!s.id.empty()) {
    v.task = s.task;
    v.tree_verdict = s.verdict;
  }
  api::set_usage_fields(v, s.usage);
  v.uncached_cost_usd = s.uncached_cost_usd;
  const std::int64_t input =
      s.usage.input_tokens + s.usage.cache_read_tokens + s.usage.cache_write_tokens;
  v.cache_hit_share =
      input > 0 ? static_cast<double>(s.usage.cache_read_tokens) / static_cast<double>(input) : 0;
  v.model_calls = s.model_calls;
  v.iterations = s.iterations;
  int total = 0;
  for (const auto& [status, n] : s.loops) {
    v.loops[status] = n;
    total += n;
  }
  v.loops[api::kTotal] = total;
  v.wall_ms = s.wall_ms;
  v.iteration_ms = s.iteration_ms;
  return v;
}

}  // namespace

Stats compute_stats(std::span<const Loop> loops,
                    const std::map<std::string, std::vector<IterationRecord>>& iterations_of,
                    TimestampMs since, TimestampMs now, MergeMode mode) {
  std::map<std::string, std::vector<Loop>> trees;
  for (const Loop& l : loops) trees[l.plan_id].push_back(l);
  static const std::vector<IterationRecord> kNone;
  Stats out;
  out.since = since;
  std::vector<std::pair<TimestampMs, TimestampMs>> spans;
  for (const auto& [plan_id, tree] : trees) {
    TimestampMs changed = 0, created = now;
    const Loop* plan = nullptr;
    for (const Loop& l : tree) {
      changed = std::max(changed, l.updated_at);
      created = std::min(created, l.created_at);
      if (l.id == plan_id) plan = &l;
    }
    if (since > 0 && changed < since) continue;
    SpendStats s;
    s.id = plan_id;
    TreeVerdict verdict = tree_verdict(tree, plan_id, mode);
    s.verdict = to_string(verdict);
    if (plan) {
      s.task = plan->task;
      created = plan->created_at;
    }
    for (const Loop& l : tree) {
      auto found = iterations_of.find(l.id);
      const auto& its = found == iterations_of.end() ? kNone : found->second;
      Usage recorded;
      for (const IterationRecord& it : its) {
        recorded += it.usage;
        if (since > 0 && it.finished_at < since) continue;
        s.usage += it.usage;
        s.uncached_cost_usd += it.details.uncached_or(it.usage.cost_usd);
        ++s.iterations;
        s.model_calls += it.details.turns;
        s.iteration_ms += it.duration_ms;
      }
      if (since > 0 && l.updated_at < since) continue;
      const Usage rest = unrecorded(l, recorded);
      s.usage += rest;
      s.uncached_cost_usd += rest.cost_usd;
      ++s.loops[to_string(l.status)];
    }
    s.first = std::max(created, since);
    s.last = at_work(verdict) ? now : changed;
    s.wall_ms = std::max<std::int64_t>(0, s.last - s.first);
    if (s.wall_ms > 0) spans.emplace_back(s.first, s.last);
    add(out.total, s);
    out.plans.push_back(std::move(s));
  }
  out.total.wall_ms = covered(std::move(spans));
  for (const SpendStats& p : out.plans) {
    if (p.wall_ms <= 0) continue;
    out.total.first = out.total.first == 0 ? p.first : std::min(out.total.first, p.first);
    out.total.last = std::max(out.total.last, p.last);
  }
  return out;
}

Result<Stats> stats_of_store(const TaskStore& store, TimestampMs since, MergeMode mode) {
  LOOPR_ASSIGN(std::vector<Loop> loops, store.list_loops());
  std::map<std::string, std::vector<IterationRecord>> iterations;
  for (const Loop& l : loops) {
    LOOPR_ASSIGN(iterations[l.id], store.iterations(l.id));
  }
  return compute_stats(loops, iterations, since, now_ms(), mode);
}

nlohmann::json to_json(const Stats& stats) {
  api::StatsView v;
  if (stats.since > 0) v.since = format_timestamp(stats.since);
  for (const SpendStats& p : stats.plans) v.plans.push_back(spend_view(p));
  v.total = spend_view(stats.total);
  return api::to_json(v);
}

}  // namespace loopr::manager
