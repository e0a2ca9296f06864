// The maintenance answers' codec. Reading never throws: a missing or mistyped field reads as its
// default.
#include <loopr/api/maintenance.hpp>
#include <loopr/core/enum_texts.hpp>

#include "json_read.hpp"

namespace loopr::api {
namespace {

using json = nlohmann::json;

using namespace read;

}  // namespace

json to_json(const SpendView& s) {
  json loops = json::object();
  for (const auto& [status, n] : s.loops) loops[status] = n;
  json j = json::object();
  if (!s.id.empty()) {
    j["id"] = s.id;
    j["task"] = s.task;
    j["tree_verdict"] = s.tree_verdict;
  }
  j["cost_usd"] = s.cost_usd;
  j["input_tokens"] = s.input_tokens;
  j["output_tokens"] = s.output_tokens;
  j["cache_read_tokens"] = s.cache_read_tokens;
  j["cache_write_tokens"] = s.cache_write_tokens;
  j["uncached_cost_usd"] = s.uncached_cost_usd;
  j["cache_hit_share"] = s.cache_hit_share;
  j["model_calls"] = s.model_calls;
  j["iterations"] = s.iterations;
  j["loops"] = std::move(loops);
  j["wall_ms"] = s.wall_ms;
  j["iteration_ms"] = s.iteration_ms;
  return j;
}

SpendView spend_from_json(const json& j) {
  SpendView s;
  if (!j.is_object()) return s;
  s.id = str(j, "id");
  s.task = str(j, "task");
  s.tree_verdict = str(j, "tree_verdict");
  s.cost_usd = num(j, "cost_usd");
  s.input_tokens = i64(j, "input_tokens");
  s.output_tokens = i64(j, "output_tokens");
  s.cache_read_tokens = i64(j, "cache_read_tokens");
  s.cache_write_tokens = i64(j, "cache_write_tokens");
  s.uncached_cost_usd = num(j, "uncached_cost_usd");
  s.cache_hit_share = num(j, "cache_hit_share");
  s.model_calls = static_cast<int>(i64(j, "model_calls"));
  s.iterations = static_cast<int>(i64(j, "iterations"));
  if (const json& l = sub(j, "loops"); l.is_object())
    for (auto it = l.begin(); it != l.end(); ++it)
      if (it->is_number()) s.loops[it.key()] = it->get<int>();
  s.wall_ms = i64(j, "wall_ms");
  s.iteration_ms = i64(j, "iteration_ms");
  return s;
}

json to_json(const StatsView& s) {
  json plans = json::array();
  for (const auto& p : s.plans) plans.push_back(to_json(p));
  return {{"since", s.since.empty() ? json(nullptr) : json(s.since)},
          {"plans", std::move(plans)},
          {"total", to_json(s.total)}};
}

StatsView stats_from_json(const json& j) {
  StatsView s;
  if (!j.is_object()) return s;
  s.since = str(j, "since");
  if (const json& p = sub(j, "plans"); p.is_array())
    for (const auto& row : p) s.plans.push_back(spend_from_json(row));
  s.total = spend_from_json(sub(j, "total"));
  return s;
}

namespace {

constexpr EnumText<GcKind> kGcKinds[] = {{GcKind::worktree, "worktree"},
                                         {GcKind::branch, "branch"},
                                         {GcKind::registration, "registration"},
                                         {GcKind::folder, "folder"},
                                         {GcKind::logs, "logs"}};
constexpr EnumText<GcAction> kGcActions[] = {{GcAction::archived, "archived"},
                                             {GcAction::deleted, "deleted"},
                                             {GcAction::removed, "removed"},
                                             {GcAction::pruned, "pruned"}};
constexpr EnumText<GcAction> kGcWould[] = {{GcAction::archived, "would archive"},
                                           {GcAction::deleted, "would delete"},
                                           {GcAction::removed, "would remove"},
                                           {GcAction::pruned, "would prune"}};

}  // namespace

const char* to_string(GcKind kind) { return text_of(kGcKinds, kind); }
const char* to_string(GcAction action) { return text_of(kGcActions, action); }
const char* would(GcAction action) { return text_of(kGcWould, action); }

json to_json(const GcView& g) {
  json removed = json::array();
  for (const auto& i : g.removed) {
    json j = {{"kind", to_string(i.kind)},
              {"name", i.name},
              {"action", to_string(i.action)},
              {"bytes", i.bytes},
              {"reason", i.reason}};
    if (!i.kept_on.empty()) j["kept_on"] = i.kept_on;
    if (!i.loop_id.empty()) j["loop_id"] = i.loop_id;
    removed.push_back(std::move(j));
  }
  return {{"dry_run", g.dry_run},
          {"removed", std::move(removed)},
          {"errors", g.errors},
          {"bytes_freed", g.bytes_freed},
          {"worktrees", g.worktrees},
          {"branches_deleted", g.branches_deleted},
          {"branches_archived", g.branches_archived},
          {"logs", g.logs},
          {"logs_bytes", g.logs_bytes}};
}

GcView gc_from_json(const json& j) {
  GcView g;
  if (!j.is_object()) return g;
  g.dry_run = flag(j, "dry_run");
  if (const json& r = sub(j, "removed"); r.is_array())
    for (const auto& it : r)
      if (it.is_object())
        g.removed.push_back({value_of(kGcKinds, str(it, "kind"), GcKind::folder), str(it, "name"),
                             value_of(kGcActions, str(it, "action"), GcAction::removed),
                             str(it, "reason"), str(it, "kept_on"), str(it, "loop_id"),
                             u64(it, "bytes")});
  if (const json& e = sub(j, "errors"); e.is_array())
    for (const auto& s : e)
      if (s.is_string()) g.errors.push_back(s.get<std::string>());
  g.bytes_freed = u64(j, "bytes_freed");
  g.worktrees = static_cast<int>(i64(j, "worktrees"));
  g.branches_deleted = static_cast<int>(i64(j, "branches_deleted"));
  g.branches_archived = static_cast<int>(i64(j, "branches_archived"));
  g.logs = static_cast<int>(i64(j, "logs"));
  g.logs_bytes = u64(j, "logs_bytes");
  return g;
}

}  // namespace loopr::api
