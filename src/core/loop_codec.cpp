// The one codec of the loop record: the store's JSON (every field, the marks under "context"
// with the key names every earlier loopr wrote) and INTERFACE.md's `--json` shape.
//
// The marks are read tolerantly, the way earlier versions read their JSON: a key that is missing
// or has another type than expected reads as the default. They are written only when they differ
// from the default, which is also how earlier versions left them (a key was set or erased), so a
// record written here reads the same in an older loopr.
#include <loopr/core/loop.hpp>

namespace loopr {
namespace {

using nlohmann::json;

// Every key the marks use; whatever else is under "context" is kept in `unknown_marks`.
constexpr const char* kMarkKeys[] = {"merged_iteration",
                                     "merged_sha",
                                     "based_on",
                                     "spawned_iteration",
                                     "children_base",
                                     "integration_generation",
                                     "conflicts",
                                     "attempt",
                                     "rolled_up",
                                     "user_rejected",
                                     "invalidated_worktree",
                                     "base_branch",
                                     "tree_complete",
                                     "merged_into_base",
                                     "merge_error",
                                     "gate_sha",
                                     "gate_result",
                                     "gate_summary",
                                     "gate_output",
                                     "gate_log",
                                     "gate_fixes",
                                     "dry_run",
                                     "runtime_from",
                                     "budget_cost_usd",
                                     "budget_runtime_ms",
                                     "budget_iterations",
                                     "pr_number",
                                     "pr_url",
                                     "pr_state",
                                     "pr_checks",
                                     "pr_head",
                                     "pr_pushed_at",
                                     "pr_failing",
                                     "pr_error",
                                     "ci_fixes",
                                     "consecutive_errors",
                                     "no_progress",
                                     "last_error",
                                     "last_validation_hash",
                                     "same_failures",
                                     "last_failing",
                                     "head",
                                     "feedback",
                                     "question",
                                     "answer",
                                     "attended_passed",
                                     "review_rounds"};

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
void read(const json& c, const char* key, std::string& out) {
  if (auto it = c.find(key); it != c.end() && it->is_string()) out = it->get<std::string>();
}
void read(const json& c, const char* key, bool& out) {
  if (auto it = c.find(key); it != c.end() && it->is_boolean()) out = it->get<bool>();
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

void write(json& c, const char* key, int value, int fallback) {
  if (value != fallback) c[key] = value;
}
void write(json& c, const char* key, std::int64_t value, std::int64_t fallback) {
  if (value != fallback) c[key] = value;
}
void write(json& c, const char* key, const std::optional<int>& value) {
  if (value) c[key] = *value;
}
void write(json& c, const char* key, const std::string& value) {
  if (!value.empty()) c[key] = value;
}
void write(json& c, const char* key, bool value) {
  if (value) c[key] = true;
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
  const TreeMarks& t = l.tree;
  write(c, "merged_iteration", t.merged_iteration);
  write(c, "merged_sha", t.merged_sha);
  write(c, "based_on", t.based_on);
  write(c, "spawned_iteration", t.spawned_iteration);
  write(c, "children_base", t.children_base, 0);
  write(c, "integration_generation", t.integration_generation);
  write(c, "conflicts", t.conflicts);
  write(c, "attempt", t.attempt, 1);
  write(c, "rolled_up", t.rolled_up);
  write(c, "user_rejected", t.user_rejected);
  write(c, "invalidated_worktree", t.invalidated_worktree);
  write(c, "base_branch", t.base_branch);
  write(c, "tree_complete", t.tree_complete);
  write(c, "merged_into_base", t.merged_into_base);
  write(c, "merge_error", t.merge_error);
  write(c, "gate_sha", t.gate_sha);
  write(c, "gate_result", std::string(to_string(t.gate_result)));
  write(c, "gate_summary", t.gate_summary);
  write(c, "gate_output", t.gate_output);
  write(c, "gate_log", t.gate_log);
  write(c, "gate_fixes", t.gate_fixes, 0);
  write(c, "dry_run", t.dry_run);
  write(c, "runtime_from", t.runtime_from, std::int64_t{0});
  if (t.budget.max_cost_usd > 0) c["budget_cost_usd"] = t.budget.max_cost_usd;
  write(c, "budget_runtime_ms", std::int64_t{t.budget.max_runtime.count()}, std::int64_t{0});
  write(c, "budget_iterations", t.budget.max_iterations, 0);
  write(c, "pr_number", t.pr_number, 0);
  write(c, "pr_url", t.pr_url);
  write(c, "pr_state", std::string(to_string(t.pr_state)));
  write(c, "pr_checks", std::string(to_string(t.pr_checks)));
  write(c, "pr_head", t.pr_head);
  write(c, "pr_pushed_at", t.pr_pushed_at, std::int64_t{0});
  write(c, "pr_failing", t.pr_failing);
  write(c, "pr_error", t.pr_error);
  write(c, "ci_fixes", t.ci_fixes, 0);
  const RunMarks& r = l.run;
  write(c, "consecutive_errors", r.consecutive_errors, 0);
  write(c, "no_progress", r.no_progress, 0);
  write(c, "last_error", r.last_error);
  write(c, "last_validation_hash", r.last_validation_hash);
  write(c, "same_failures", r.same_failures, 0);
  write(c, "last_failing", r.last_failing);
  write(c, "head", r.head);
  write(c, "feedback", r.feedback);
  write(c, "question", r.question);
  write(c, "answer", r.answer);
  write(c, "attended_passed", r.attended_passed, 0);
  write(c, "review_rounds", r.review_rounds, 0);
  return c;
}

void read_marks(const json& c, Loop& l) {
  if (!c.is_object()) return;
  TreeMarks& t = l.tree;
  read(c, "merged_iteration", t.merged_iteration);
  read(c, "merged_sha", t.merged_sha);
  read(c, "based_on", t.based_on);
  read(c, "spawned_iteration", t.spawned_iteration);
  read(c, "children_base", t.children_base);
  read(c, "integration_generation", t.integration_generation);
  read(c, "conflicts", t.conflicts);
  read(c, "attempt", t.attempt);
  read(c, "rolled_up", t.rolled_up);
  read(c, "user_rejected", t.user_rejected);
  read(c, "invalidated_worktree", t.invalidated_worktree);
  read(c, "base_branch", t.base_branch);
  read(c, "tree_complete", t.tree_complete);
  read(c, "merged_into_base", t.merged_into_base);
  read(c, "merge_error", t.merge_error);
  read(c, "gate_sha", t.gate_sha);
  std::string text;
  read(c, "gate_result", text);
  t.gate_result = parse_gate_result(text);
  read(c, "gate_summary", t.gate_summary);
  read(c, "gate_output", t.gate_output);
  read(c, "gate_log", t.gate_log);
  read(c, "gate_fixes", t.gate_fixes);
  read(c, "dry_run", t.dry_run);
  read(c, "runtime_from", t.runtime_from);
  if (auto it = c.find("budget_cost_usd"); it != c.end() && it->is_number())
    t.budget.max_cost_usd = it->get<double>();
  std::int64_t budget_ms = 0;
  read(c, "budget_runtime_ms", budget_ms);
  t.budget.max_runtime = std::chrono::milliseconds(budget_ms);
  read(c, "budget_iterations", t.budget.max_iterations);
  read(c, "pr_number", t.pr_number);
  read(c, "pr_url", t.pr_url);
  text.clear();
  read(c, "pr_state", text);
  t.pr_state = parse_pull_request_state(text);
  text.clear();
  read(c, "pr_checks", text);
  t.pr_checks = parse_pr_checks(text);
  read(c, "pr_head", t.pr_head);
  read(c, "pr_pushed_at", t.pr_pushed_at);
  read(c, "pr_failing", t.pr_failing);
  read(c, "pr_error", t.pr_error);
  read(c, "ci_fixes", t.ci_fixes);
  RunMarks& r = l.run;
  read(c, "consecutive_errors", r.consecutive_errors);
  read(c, "no_progress", r.no_progress);
  read(c, "last_error", r.last_error);
  read(c, "last_validation_hash", r.last_validation_hash);
  read(c, "same_failures", r.same_failures);
  read(c, "last_failing", r.last_failing);
  read(c, "head", r.head);
  read(c, "feedback", r.feedback);
  read(c, "question", r.question);
  read(c, "answer", r.answer);
  read(c, "attended_passed", r.attended_passed);
  read(c, "review_rounds", r.review_rounds);
  // Only what is left over is copied (not the whole context with its feedback).
  for (auto it = c.begin(); it != c.end(); ++it) {
    bool known = false;
    for (const char* key : kMarkKeys) known = known || it.key() == key;
    if (!known) l.unknown_marks[it.key()] = it.value();
  }
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
