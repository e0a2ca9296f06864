// The views' one codec each way. Reading never throws: a field of the wrong type reads as its
// default (a client shows what it can), and unknown fields are kept in `extra`.
#include <loopr/api/views.hpp>

#include "json_read.hpp"

#include <cstdio>
#include <initializer_list>
#include <set>

#include <loopr/api/usage_fields.hpp>
#include <loopr/core/figures.hpp>

namespace loopr::api {
namespace {

using json = nlohmann::json;

json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
json or_null(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

using namespace read;

// `j`'s fields not in `known`.
json extra_of(const json& j, std::initializer_list<std::set<std::string>> known) {
  json out = json::object();
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool k = false;
    for (const auto& set : known) k = k || set.count(it.key()) > 0;
    if (!k) out[it.key()] = it.value();
  }
  return out;
}

const std::set<std::string> kRowFields = {
    "id",         "type",       "status",        "parent_id",  "iteration",    "max_iterations",
    "cost_usd",   "input_tokens", "output_tokens", "artifacts", "worktree",     "branch",
    "created_at", "updated_at", "end_reason",    "plan_id",    "task",         "status_reason",
    "question",   "answer",     "tree_verdict",  "base_branch", "merged_into_base",
    "merge_error", "tree_cost_usd", "integration", "baseline", "pr",
    "cache_read_tokens", "cache_write_tokens", "uncached_cost_usd", "tree_usage"};
const std::set<std::string> kDetailFields = {"iterations",     "validation_output", "progress",
                                             "input_artifact", "conflicts",         "forecast",
                                             "actual",         "budget"};


}  // namespace

json to_json(const BudgetView& b) {
  return {{"max_cost_usd", b.max_cost_usd ? json(*b.max_cost_usd) : json(nullptr)},
          {"max_runtime", b.max_runtime ? json(*b.max_runtime) : json(nullptr)},
          {"max_iterations", b.max_iterations ? json(*b.max_iterations) : json(nullptr)}};
}

BudgetView budget_from_json(const json& j) {
  BudgetView b;
  if (const json& c = sub(j, "max_cost_usd"); c.is_number()) b.max_cost_usd = c.get<double>();
  if (const json& r = sub(j, "max_runtime"); r.is_string()) b.max_runtime = r.get<std::string>();
  if (const json& n = sub(j, "max_iterations"); n.is_number()) b.max_iterations = n.get<int>();
  return b;
}

json to_json(const PrView& p) {
  return {{"number", p.number},
          {"url", or_null(p.url)},
          {"state", or_null(to_string(p.state))},
          {"checks", or_null(to_string(p.checks))},
          {"head", or_null(p.head)},
          {"failing", or_null(p.failing)},
          {"error", or_null(p.error)},
          {"ci_fix_loops", p.ci_fix_loops}};
}

json to_json(const ForecastView& f) {
  json j = {{"cost_usd", f.cost_usd},     {"low", f.low},
          {"high", f.high},             {"loops", f.loops},
          {"basis", f.basis},           {"specs", f.specs},
          {"phases", f.phases},         {"model_calls", f.model_calls},
          {"duration_ms", f.duration_ms}, {"plan_iteration", f.plan_iteration},
          {"made_at", f.made_at},       {"max_cost_usd", f.max_cost_usd},
          {"over_limit", f.over_limit}};
  if (!f.max_cost_source.empty()) j["max_cost_source"] = f.max_cost_source;
  return j;
}

ForecastView forecast_from_json(const json& j) {
  ForecastView f;
  f.cost_usd = num(j, "cost_usd");
  f.low = num(j, "low");
  f.high = num(j, "high");
  f.loops = i32(j, "loops");
  f.basis = str(j, "basis");
  f.specs = i32(j, "specs");
  f.phases = i32(j, "phases");
  f.model_calls = i32(j, "model_calls");
  f.duration_ms = i64(j, "duration_ms");
  f.plan_iteration = i32(j, "plan_iteration");
  f.made_at = str(j, "made_at");
  f.max_cost_usd = num(j, "max_cost_usd");
  f.over_limit = flag(j, "over_limit");
  f.max_cost_source = str(j, "max_cost_source");
  return f;
}

json to_json(const ActualView& a) {
  return {{"cost_usd", a.cost_usd},
          {"loops", a.loops},
          {"model_calls", a.model_calls},
          {"duration_ms", a.duration_ms}};
}

ActualView actual_from_json(const json& j) {
  return {num(j, "cost_usd"), i32(j, "loops"), i32(j, "model_calls"), i64(j, "duration_ms")};
}

LoopRow row_of(const Loop& loop) {
  LoopRow r;
  r.id = loop.id;
  r.type = loop.type;
  r.status = loop.status;
  r.parent_id = loop.parent_id;
  r.iteration = loop.iteration;
  r.max_iterations = loop.max_iterations;
  set_usage_fields(r, loop.usage);
  r.artifacts = loop.output_artifacts;
  r.worktree = loop.worktree;
  r.branch = loop.branch;
  r.created_at = loop.created_at;
  r.updated_at = loop.updated_at;
  r.end_reason = loop.end_reason;
  r.plan_id = loop.plan_id;
  r.task = loop.task;
  r.status_reason = loop.status_reason;
  return r;
}

json to_json(const LoopRow& r) {
  json j = r.extra.is_object() ? r.extra : json::object();
  j["id"] = r.id;
  j["type"] = to_string(r.type);
  j["status"] = to_string(r.status);
  j["parent_id"] = or_null(r.parent_id);
  j["iteration"] = r.iteration;
  j["max_iterations"] = r.max_iterations;
  j["cost_usd"] = r.cost_usd;
  j["input_tokens"] = r.input_tokens;
  j["output_tokens"] = r.output_tokens;
  j["cache_read_tokens"] = r.cache_read_tokens;
  j["cache_write_tokens"] = r.cache_write_tokens;
  if (r.uncached_cost_usd) j["uncached_cost_usd"] = *r.uncached_cost_usd;
  j["artifacts"] = r.artifacts;
  j["worktree"] = or_null(r.worktree);
  j["branch"] = or_null(r.branch);
  j["created_at"] = format_timestamp(r.created_at);
  j["updated_at"] = format_timestamp(r.updated_at);
  j["end_reason"] = r.end_reason == EndReason::none ? json(nullptr) : json(to_string(r.end_reason));
  j["plan_id"] = r.plan_id;
  j["task"] = r.task;
  j["status_reason"] = r.status_reason;
  if (r.question) {
    j["question"] = *r.question;
    j["answer"] = r.answer ? json(*r.answer) : json(nullptr);
  }
  if (r.tree_verdict) {
    j["tree_verdict"] = to_string(*r.tree_verdict);
    j["base_branch"] = or_null(r.base_branch);
    j["merged_into_base"] = or_null(r.merged_into_base);
    j["merge_error"] = or_null(r.merge_error);
    if (!r.integration) {
      j["integration"] = nullptr;
    } else {
      const IntegrationView& g = *r.integration;
      j["integration"] = {{"result", g.result},         {"sha", or_null(g.sha)},
                          {"summary", or_null(g.summary)}, {"output", or_null(g.output)},
                          {"log", or_null(g.log)},        {"fix_loops", g.fix_loops}};
    }
  }
  if (r.tree_verdict) {
    if (!r.baseline) {
      j["baseline"] = nullptr;
    } else {
      const BaselineView& b = *r.baseline;
      j["baseline"] = {{"result", b.result},          {"sha", or_null(b.sha)},
                       {"summary", or_null(b.summary)}, {"output", or_null(b.output)},
                       {"log", or_null(b.log)},         {"duration_ms", b.duration_ms},
                       {"setup_ms", b.setup_ms},        {"outputs", b.outputs}};
    }
  }
  if (r.tree_verdict) {
    if (!r.pr) {
      j["pr"] = nullptr;
    } else {
      j["pr"] = to_json(*r.pr);
    }
  }
  if (r.tree_cost_usd) j["tree_cost_usd"] = *r.tree_cost_usd;
  if (r.tree_usage) {
    const TreeUsageView& u = *r.tree_usage;
    j["tree_usage"] = {{"input_tokens", u.input_tokens},
                       {"output_tokens", u.output_tokens},
                       {"cache_read_tokens", u.cache_read_tokens},
                       {"cache_write_tokens", u.cache_write_tokens},
                       {"uncached_cost_usd", u.uncached_cost_usd}};
  }
  return j;
}

LoopRow loop_row_from_json(const json& j) {
  LoopRow r;
  if (!j.is_object()) return r;
  r.id = str(j, "id");
  r.type = parse_loop_type(str(j, "type")).value_or(LoopType::plan);
  r.status = parse_loop_status(str(j, "status")).value_or(LoopStatus::pending);
  r.parent_id = str(j, "parent_id");
  r.iteration = i32(j, "iteration");
  r.max_iterations = i32(j, "max_iterations");
  r.cost_usd = num(j, "cost_usd");
  r.input_tokens = i64(j, "input_tokens");
  r.output_tokens = i64(j, "output_tokens");
  r.cache_read_tokens = i64(j, "cache_read_tokens");
  r.cache_write_tokens = i64(j, "cache_write_tokens");
  if (auto it = j.find("uncached_cost_usd"); it != j.end() && it->is_number())
    r.uncached_cost_usd = it->get<double>();
  r.artifacts = strs(j, "artifacts");
  r.worktree = str(j, "worktree");
  r.branch = str(j, "branch");
  r.created_at = when(j, "created_at");
  r.updated_at = when(j, "updated_at");
  if (std::string e = str(j, "end_reason"); !e.empty())
    r.end_reason = parse_end_reason(e).value_or(EndReason::unknown);
  r.plan_id = str(j, "plan_id");
  r.task = str(j, "task");
  r.status_reason = str(j, "status_reason");
  if (j.contains("question") && j["question"].is_string()) {
    r.question = j["question"].get<std::string>();
    if (j.contains("answer") && j["answer"].is_string()) r.answer = j["answer"].get<std::string>();
  }
  if (std::string v = str(j, "tree_verdict"); !v.empty()) {
    r.tree_verdict = parse_tree_verdict(v).value_or(TreeVerdict::running);
    r.base_branch = str(j, "base_branch");
    r.merged_into_base = str(j, "merged_into_base");
    r.merge_error = str(j, "merge_error");
    if (auto it = j.find("integration"); it != j.end() && it->is_object())
      r.integration = IntegrationView{str(*it, "result"), str(*it, "sha"), str(*it, "summary"),
                                      str(*it, "output"), str(*it, "log"), i32(*it, "fix_loops")};
  }
  if (const json& p = sub(j, "pr"); p.is_object())
    r.pr = PrView{i32(p, "number"),
                  str(p, "url"),
                  parse_pull_request_state(str(p, "state")),
                  parse_pr_checks(str(p, "checks")),
                  str(p, "head"),
                  str(p, "failing"),
                  str(p, "error"),
                  i32(p, "ci_fix_loops")};
  if (const json& b = sub(j, "baseline"); b.is_object())
    r.baseline = BaselineView{str(b, "result"), str(b, "sha"),          str(b, "summary"),
                              str(b, "output"), str(b, "log"),          i64(b, "duration_ms"),
                              i64(b, "setup_ms"), {}};
  if (const json& b = sub(j, "baseline"); b.is_object() && b.contains("outputs") &&
                                          b["outputs"].is_array())
    for (const auto& o : b["outputs"])
      if (o.is_string()) r.baseline->outputs.push_back(o.get<std::string>());
  if (auto it = j.find("tree_cost_usd"); it != j.end() && it->is_number())
    r.tree_cost_usd = it->get<double>();
  if (const json& u = sub(j, "tree_usage"); u.is_object())
    r.tree_usage = TreeUsageView{i64(u, "input_tokens"), i64(u, "output_tokens"),
                                 i64(u, "cache_read_tokens"), i64(u, "cache_write_tokens"),
                                 num(u, "uncached_cost_usd")};
  r.extra = extra_of(j, {kRowFields, kDetailFields});
  return r;
}

std::vector<LoopRow> loop_rows_from_json(const json& j) {
  std::vector<LoopRow> out;
  if (!j.is_object()) return out;
  auto it = j.find("loops");
  if (it == j.end() || !it->is_array()) return out;
  out.reserve(it->size());
  for (const auto& row : *it) out.push_back(loop_row_from_json(row));
  return out;
}

json to_json(const IterationRow& it) {
  json j = {{"n", it.n},
          {"status", to_string(it.status)},
          {"exit_code", or_null(it.exit_code)},
          {"cost_usd", it.cost_usd},
          {"input_tokens", it.input_tokens},
          {"output_tokens", it.output_tokens},
          {"duration_ms", it.duration_ms},
          {"summary", it.summary},
          {"cache_read_tokens", it.cache_read_tokens},
          {"cache_write_tokens", it.cache_write_tokens},
          {"uncached_cost_usd", it.uncached_cost_usd}};
  if (it.notional_cost_usd) j["notional_cost_usd"] = *it.notional_cost_usd;
  return j;
}

IterationRow iteration_from_json(const json& j) {
  IterationRow r{i32(j, "n"),
          parse_iteration_outcome(str(j, "status")),
          opt_int(j, "exit_code"),
          num(j, "cost_usd"),
          i64(j, "input_tokens"),
          i64(j, "output_tokens"),
          i64(j, "duration_ms"),
          str(j, "summary"),
          i64(j, "cache_read_tokens"),
          i64(j, "cache_write_tokens"),
          num(j, "uncached_cost_usd"),
                  std::nullopt};
  if (auto it = j.find("notional_cost_usd"); it != j.end() && it->is_number())
    r.notional_cost_usd = it->get<double>();
  return r;
}

json to_json(const LoopDetail& d) {
  json j = to_json(d.loop);
  json its = json::array();
  for (const auto& it : d.iterations) its.push_back(to_json(it));
  j["iterations"] = std::move(its);
  j["validation_output"] = d.validation_output;
  j["progress"] = d.progress;
  j["input_artifact"] = d.input_artifact;
  if (!d.conflicts.empty()) j["conflicts"] = d.conflicts;
  if (d.forecast) j["forecast"] = to_json(*d.forecast);
  if (d.actual) j["actual"] = to_json(*d.actual);
  if (d.budget) j["budget"] = to_json(*d.budget);
  return j;
}

LoopDetail loop_detail_from_json(const json& j) {
  LoopDetail d;
  d.loop = loop_row_from_json(j);
  if (!j.is_object()) return d;
  if (auto it = j.find("iterations"); it != j.end() && it->is_array())
    for (const auto& rec : *it) d.iterations.push_back(iteration_from_json(rec));
  d.validation_output = str(j, "validation_output");
  d.progress = str(j, "progress");
  d.input_artifact = str(j, "input_artifact");
  d.conflicts = strs(j, "conflicts");
  if (auto it = j.find("forecast"); it != j.end() && it->is_object())
    d.forecast = forecast_from_json(*it);
  if (auto it = j.find("actual"); it != j.end() && it->is_object())
    d.actual = actual_from_json(*it);
  if (auto it = j.find("budget"); it != j.end() && it->is_object())
    d.budget = budget_from_json(*it);
  return d;
}

double cache_hit_share(std::int64_t input, std::int64_t read, std::int64_t write) {
  const std::int64_t all = input + read + write;
  return all > 0 ? static_cast<double>(read) / static_cast<double>(all) : 0;
}

std::string cache_summary(std::int64_t input, std::int64_t read, std::int64_t write,
                          std::optional<double> uncached_usd) {
  if (read == 0 && write == 0) return {};
  char share[16];
  std::snprintf(share, sizeof share, "%.0f%%", 100 * cache_hit_share(input, read, write));
  std::string out = format_count(read) + " read, " + format_count(write) + " written (" + share +
                    " of input read)";
  if (uncached_usd) out += ", " + format_cost(*uncached_usd) + " without the cache";
  return out;
}

std::string cache_summary(const LoopRow& d) {
  std::string own =
      cache_summary(d.input_tokens, d.cache_read_tokens, d.cache_write_tokens, d.uncached_cost_usd);
  std::string tree;
  if (const auto& u = d.tree_usage; u && d.is_plan())
    tree = cache_summary(u->input_tokens, u->cache_read_tokens, u->cache_write_tokens,
                         u->uncached_cost_usd);
  if (tree.empty()) return own;
  return (own.empty() ? "none for the plan itself" : own) + "; whole tree " + tree;
}

namespace {

json to_json(const SandboxView& sb) {
  if (!sb.present) return nullptr;
  json j = sb.extra.is_object() ? sb.extra : json::object();
  j["kind"] = sb.kind;
  j["confined"] = sb.confined;
  j["description"] = sb.description;
  j["available"] = sb.available;
  j["problem"] = or_null(sb.problem);
  if (sb.executor)
    j["executor"] = {{"kind", sb.executor->kind},
                     {"jobs_queued", sb.executor->jobs_queued},
                     {"jobs_running", sb.executor->jobs_running},
                     {"jobs_cleaning", sb.executor->jobs_cleaning}};
  return j;
}

SandboxView sandbox_from_json(const json& j) {
  SandboxView sb;
  if (!j.is_object()) return sb;
  sb.present = true;
  sb.kind = str(j, "kind");
  sb.description = str(j, "description");
  sb.confined = !j.contains("confined") || flag(j, "confined");
  sb.available = !j.contains("available") || flag(j, "available");
  sb.problem = str(j, "problem");
  if (auto it = j.find("executor"); it != j.end() && it->is_object())
    sb.executor = ExecutorView{str(*it, "kind"), i32(*it, "jobs_queued"), i32(*it, "jobs_running"),
                               i32(*it, "jobs_cleaning")};
  sb.extra = extra_of(j, {{"kind", "confined", "description", "available", "problem", "executor"}});
  return sb;
}

}  // namespace

json to_json(const Health& h) {
  json j = h.extra.is_object() ? h.extra : json::object();
  j["ok"] = true;
  j["pid"] = h.pid;
  j["started_at"] = h.started_at;
  j["uptime_s"] = h.uptime_s;
  j["repo"] = h.repo;
  j["active_runs"] = h.active_runs;
  j["stopping"] = h.stopping;
  j["draining"] = h.draining;
  j["sandbox"] = to_json(h.sandbox);
  j["web"] = h.web ? json{{"url", h.web->url}, {"port", h.web->port}} : json(nullptr);
  j["disk"] = h.disk ? json{{"dir", h.disk->dir},
                            {"free_mib", h.disk->free_mib},
                            {"min_free_mib", h.disk->min_free_mib},
                            {"full", h.disk->full},
                            {"paused_loops", h.disk->paused_loops}}
                     : json(nullptr);
  j["loops"] = h.loops;
  return j;
}

Health health_from_json(const json& j) {
  Health h;
  if (!j.is_object()) return h;
  h.pid = i32(j, "pid");
  h.started_at = str(j, "started_at");
  h.uptime_s = i64(j, "uptime_s");
  h.repo = str(j, "repo");
  h.active_runs = i32(j, "active_runs");
  h.stopping = flag(j, "stopping");
  h.draining = flag(j, "draining");
  if (auto it = j.find("sandbox"); it != j.end()) h.sandbox = sandbox_from_json(*it);
  if (const json& w = sub(j, "web"); w.is_object()) h.web = WebView{str(w, "url"), i32(w, "port")};
  if (const json& d = sub(j, "disk"); d.is_object())
    h.disk = DiskView{str(d, "dir"), i64(d, "free_mib"), i64(d, "min_free_mib"), flag(d, "full"),
                      i32(d, "paused_loops")};
  if (auto it = j.find("loops"); it != j.end() && it->is_object())
    for (auto c = it->begin(); c != it->end(); ++c)
      if (c.value().is_number()) h.loops[c.key()] = c.value().get<int>();
  h.extra = extra_of(j, {{"ok", "pid", "started_at", "uptime_s", "repo", "active_runs",
                          "stopping", "draining", "sandbox", "web", "disk", "loops"}});
  return h;
}

}  // namespace loopr::api
