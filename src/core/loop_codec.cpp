// The one codec of the loop record: the store's JSON (every field, the marks under "context"
// with the key names every earlier loopr wrote) and INTERFACE.md's `--json` shape.
//
// The marks are read tolerantly, the way earlier versions read their JSON: a key that is missing
// or has another type than expected reads as the default. They are written only when they differ
// from the default, which is also how earlier versions left them (a key was set or erased), so a
// record written here reads the same in an older loopr.
#include <set>

#include <loopr/core/loop.hpp>

namespace loopr {
namespace {

using nlohmann::json;

// Every mark once: its key under "context" (the names every earlier loopr wrote) and its
// field; for a number, the value that is left unwritten. Reading, writing and the list of known
// keys all go through this one list.
template <typename L, typename Visit>
void each_mark(L& l, Visit&& v) {
  auto& t = l.tree;
  v("merged_iteration", t.merged_iteration);
  v("merged_sha", t.merged_sha);
  v("based_on", t.based_on);
  v("spawned_iteration", t.spawned_iteration);
  v("children_base", t.children_base, 0);
  v("integration_generation", t.integration_generation);
  v("conflicts", t.conflicts);
  v("attempt", t.attempt, 1);
  v("rolled_up", t.rolled_up);
  v("user_rejected", t.user_rejected);
  v("invalidated_worktree", t.invalidated_worktree);
  v("base_branch", t.base_branch);
  v("tree_complete", t.tree_complete);
  v("merged_into_base", t.merged_into_base);
  v("merge_error", t.merge_error);
  v("gate_sha", t.gate_sha);
  v("gate_result", t.gate_result);
  v("gate_summary", t.gate_summary);
  v("gate_output", t.gate_output);
  v("gate_log", t.gate_log);
  v("gate_fixes", t.gate_fixes, 0);
  v("dry_run", t.dry_run);
  v("runtime_from", t.runtime_from, std::int64_t{0});
  v("budget_cost_usd", t.budget.max_cost_usd);
  v("budget_runtime_ms", t.budget.max_runtime);
  v("budget_iterations", t.budget.max_iterations, 0);
  v("pr_number", t.pr_number, 0);
  v("pr_url", t.pr_url);
  v("pr_state", t.pr_state);
  v("pr_checks", t.pr_checks);
  v("pr_head", t.pr_head);
  v("pr_pushed_at", t.pr_pushed_at, std::int64_t{0});
  v("pr_failing", t.pr_failing);
  v("pr_error", t.pr_error);
  v("ci_fixes", t.ci_fixes, 0);
  auto& r = l.run;
  v("consecutive_errors", r.consecutive_errors, 0);
  v("no_progress", r.no_progress, 0);
  v("last_error", r.last_error);
  v("last_validation_hash", r.last_validation_hash);
  v("same_failures", r.same_failures, 0);
  v("last_failing", r.last_failing);
  v("head", r.head);
  v("feedback", r.feedback);
  v("question", r.question);
  v("answer", r.answer);
  v("attended_passed", r.attended_passed, 0);
  v("review_rounds", r.review_rounds, 0);
}

// Reads: a key that is missing or of another type leaves the field at its default.
void read(const json& c, const char* key, int& out) {
  if (auto it = c.find(key); it != c.end() && it->is_number_integer()) out = it->get<int>();
}
void read(const json& c, const char* key, std::int64_t& out) {
  if (auto it = c.find(key); it != c.end() && it->is_number_integer())
    out = it->get<std::int64_t>();
}
void read(const json& c, const char* key, std::optional<int>& out) {
  if (auto it = c.find(key); it != c.end() && it->is_number_integer()) out = it->get<int>();
}
void read(const json& c, const char* key, double& out) {
  if (auto it = c.find(key); it != c.end() && it->is_number()) out = it->get<double>();
}
void read(const json& c, const char* key, std::chrono::milliseconds& out) {
  std::int64_t ms = 0;
  read(c, key, ms);
  out = std::chrono::milliseconds(ms);
}
void read(const json& c, const char* key, std::string& out) {
  if (auto it = c.find(key); it != c.end() && it->is_string()) out = it->get<std::string>();
}
void read(const json& c, const char* key, bool& out) {
  if (auto it = c.find(key); it != c.end() && it->is_boolean()) out = it->get<bool>();
}
void read(const json& c, const char* key, GateResult& out) {
  std::string text;
  read(c, key, text);
  out = parse_gate_result(text);
}
void read(const json& c, const char* key, PullRequestState& out) {
  std::string text;
  read(c, key, text);
  out = parse_pull_request_state(text);
}
void read(const json& c, const char* key, PrChecks& out) {
  std::string text;
  read(c, key, text);
  out = parse_pr_checks(text);
}
void read(const json& c, const char* key, std::vector<std::string>& out) {
  auto it = c.find(key);
  if (it == c.end() || !it->is_array()) return;
  for (const auto& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
}
void read(const json& c, const char* key, std::vector<FeedbackEntry>& out) {
  auto it = c.find(key);
  if (it == c.end() || !it->is_array()) return;
  for (const auto& j : *it) {
    if (!j.is_object()) continue;
    FeedbackEntry e;
    read(j, "iteration", e.iteration);
    std::string source;
    read(j, "source", source);
    e.source = parse_feedback_source(source);
    read(j, "summary", e.summary);
    read(j, "text", e.text);
    out.push_back(std::move(e));
  }
}

// Writes: only what differs from the default, as earlier versions left it (a key set or erased).
void write(json& c, const char* key, int value, int fallback) {
  if (value != fallback) c[key] = value;
}
void write(json& c, const char* key, std::int64_t value, std::int64_t fallback) {
  if (value != fallback) c[key] = value;
}
void write(json& c, const char* key, const std::optional<int>& value) {
  if (value) c[key] = *value;
}
void write(json& c, const char* key, double value) {
  if (value > 0) c[key] = value;
}
void write(json& c, const char* key, std::chrono::milliseconds value) {
  write(c, key, std::int64_t{value.count()}, std::int64_t{0});
}
void write(json& c, const char* key, const std::string& value) {
  if (!value.empty()) c[key] = value;
}
void write(json& c, const char* key, bool value) {
  if (value) c[key] = true;
}
void write(json& c, const char* key, GateResult value) {
  write(c, key, std::string(to_string(value)));
}
void write(json& c, const char* key, PullRequestState value) {
  write(c, key, std::string(to_string(value)));
}
void write(json& c, const char* key, PrChecks value) {
  write(c, key, std::string(to_string(value)));
}
void write(json& c, const char* key, const std::vector<std::string>& value) {
  if (!value.empty()) c[key] = value;
}
void write(json& c, const char* key, const std::vector<FeedbackEntry>& value) {
  if (value.empty()) return;
  json list = json::array();
  for (const auto& e : value)
    list.push_back({{"iteration", e.iteration},
                    {"source", to_string(e.source)},
                    {"summary", e.summary},
                    {"text", e.text}});
  c[key] = std::move(list);
}

json marks_json(const Loop& l) {
  json c = l.unknown_marks.is_object() ? l.unknown_marks : json::object();
  each_mark(l, [&c](const char* key, const auto& field, auto... fallback) {
    write(c, key, field, fallback...);
  });
  return c;
}

// Whether `key` is one of the marks' (whatever else is under "context" is kept as it was).
bool mark_key(const std::string& key) {
  static const std::set<std::string, std::less<>> keys = [] {
    std::set<std::string, std::less<>> out;
    Loop any;
    each_mark(any, [&out](const char* k, auto&&...) { out.insert(k); });
    return out;
  }();
  return keys.count(key) > 0;
}

void read_marks(const json& c, Loop& l) {
  if (!c.is_object()) return;
  each_mark(l, [&c](const char* key, auto& field, auto...) { read(c, key, field); });
  // Only what is left over is copied (not the whole context with its feedback).
  for (auto it = c.begin(); it != c.end(); ++it)
    if (!mark_key(it.key())) l.unknown_marks[it.key()] = it.value();
}

}  // namespace

nlohmann::json to_store_json(const Loop& l) {
  json out = {
      {"id", l.id},
      {"type", to_string(l.type)},
      {"parent_id", l.parent_id},
      {"plan_id", l.plan_id},
      {"index", l.index},
      {"task", l.task},
      {"input_artifact", l.input_artifact},
      {"output_artifacts", l.output_artifacts},
      {"prompt_template", l.prompt_template},
      {"validation_command", l.validation_command},
      {"max_iterations", l.max_iterations},
      {"worktree", l.worktree},
      {"branch", l.branch},
      {"iteration", l.iteration},
      {"status", to_string(l.status)},
      {"status_reason", l.status_reason},
      {"progress", l.progress},
      {"context", marks_json(l)},
      {"input_tokens", l.usage.input_tokens},
      {"output_tokens", l.usage.output_tokens},
      {"cache_read_tokens", l.usage.cache_read_tokens},
      {"cache_write_tokens", l.usage.cache_write_tokens},
      {"cost_usd", l.usage.cost_usd},
      {"created_at", l.created_at},
      {"updated_at", l.updated_at},
      {"version", l.version},
  };
  // Only when set, so a record written before end reasons existed is written back unchanged.
  if (l.end_reason != EndReason::none) out["end_reason"] = to_string(l.end_reason);
  return out;
}

Result<Loop> loop_from_store_json(const nlohmann::json& j) {
  try {
    Loop l;
    l.id = j.at("id").get<std::string>();
    auto type = parse_loop_type(j.at("type").get<std::string>());
    auto status = parse_loop_status(j.at("status").get<std::string>());
    if (!type || !status)
      return make_error(ErrorCode::invalid_argument,
                        "loop record " + l.id + " has a bad type or status");
    l.type = *type;
    l.status = *status;
    l.parent_id = j.value("parent_id", "");
    l.plan_id = j.value("plan_id", "");
    l.index = j.value("index", 0);
    l.task = j.value("task", "");
    l.input_artifact = j.value("input_artifact", "");
    l.output_artifacts = j.value("output_artifacts", std::vector<std::string>{});
    l.prompt_template = j.value("prompt_template", "");
    l.validation_command = j.value("validation_command", "");
    l.max_iterations = j.value("max_iterations", 0);
    l.worktree = j.value("worktree", "");
    l.branch = j.value("branch", "");
    l.iteration = j.value("iteration", 0);
    l.status_reason = j.value("status_reason", "");
    l.end_reason = parse_end_reason(j.value("end_reason", "none")).value_or(EndReason::unknown);
    l.progress = j.value("progress", "");
    if (auto c = j.find("context"); c != j.end()) read_marks(*c, l);
    l.usage.input_tokens = j.value("input_tokens", std::int64_t{0});
    l.usage.output_tokens = j.value("output_tokens", std::int64_t{0});
    l.usage.cache_read_tokens = j.value("cache_read_tokens", std::int64_t{0});
    l.usage.cache_write_tokens = j.value("cache_write_tokens", std::int64_t{0});
    l.usage.cost_usd = j.value("cost_usd", 0.0);
    l.created_at = j.value("created_at", TimestampMs{0});
    l.updated_at = j.value("updated_at", TimestampMs{0});
    l.version = j.value("version", std::uint64_t{0});
    return l;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::invalid_argument,
                      std::string("malformed loop record: ") + e.what());
  }
}

nlohmann::json to_api_json(const Loop& l) {
  auto or_null = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  // The values of kApiLoopFields, in its order (the names are written there only).
  json values[] = {l.id,
                   to_string(l.type),
                   to_string(l.status),
                   or_null(l.parent_id),
                   l.iteration,
                   l.max_iterations,
                   l.usage.cost_usd,
                   l.usage.input_tokens,
                   l.usage.output_tokens,
                   l.output_artifacts,
                   or_null(l.worktree),
                   or_null(l.branch),
                   format_timestamp(l.created_at),
                   format_timestamp(l.updated_at),
                   l.end_reason == EndReason::none ? json(nullptr) : json(to_string(l.end_reason))};
  static_assert(std::size(values) == std::size(kApiLoopFields));
  json out = json::object();
  for (std::size_t i = 0; i < std::size(values); ++i) out[kApiLoopFields[i]] = std::move(values[i]);
  return out;
}

}  // namespace loopr
