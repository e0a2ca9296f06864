#include <chrono>
#include <cstdio>
#include <ctime>

#include <loopr/core/loop.hpp>

namespace loopr {

const char* to_string(LoopType type) {
  switch (type) {
    case LoopType::plan: return "plan";
    case LoopType::spec: return "spec";
    case LoopType::phase: return "phase";
    case LoopType::code: return "code";
  }
  return "plan";
}

const char* to_string(LoopStatus status) {
  switch (status) {
    case LoopStatus::pending: return "pending";
    case LoopStatus::running: return "running";
    case LoopStatus::paused: return "paused";
    case LoopStatus::rebasing: return "rebasing";
    case LoopStatus::blocked: return "blocked";
    case LoopStatus::awaiting_approval: return "awaiting_approval";
    case LoopStatus::complete: return "complete";
    case LoopStatus::failed: return "failed";
    case LoopStatus::stopped: return "stopped";
    case LoopStatus::invalidated: return "invalidated";
  }
  return "pending";
}

std::optional<LoopType> parse_loop_type(std::string_view text) {
  for (LoopType t : kAllLoopTypes)
    if (text == to_string(t)) return t;
  return std::nullopt;
}

std::optional<LoopStatus> parse_loop_status(std::string_view text) {
  for (LoopStatus s : kAllLoopStatuses)
    if (text == to_string(s)) return s;
  return std::nullopt;
}

TimestampMs now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string format_timestamp(TimestampMs ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

std::optional<TimestampMs> parse_timestamp(std::string_view text) {
  std::tm tm{};
  int millis = 0;
  std::string s(text);
  int n = std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon,
                      &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis);
  if (n < 6) return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<TimestampMs>(timegm(&tm)) * 1000 + millis;
}

Usage& Usage::operator+=(const Usage& o) {
  input_tokens += o.input_tokens;
  output_tokens += o.output_tokens;
  cache_read_tokens += o.cache_read_tokens;
  cache_write_tokens += o.cache_write_tokens;
  cost_usd += o.cost_usd;
  return *this;
}

nlohmann::json to_store_json(const Loop& l) {
  return {
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
      {"context", l.context},
      {"input_tokens", l.usage.input_tokens},
      {"output_tokens", l.usage.output_tokens},
      {"cache_read_tokens", l.usage.cache_read_tokens},
      {"cache_write_tokens", l.usage.cache_write_tokens},
      {"cost_usd", l.usage.cost_usd},
      {"created_at", l.created_at},
      {"updated_at", l.updated_at},
      {"version", l.version},
  };
}

Result<Loop> loop_from_store_json(const nlohmann::json& j) {
  try {
    Loop l;
    l.id = j.at("id").get<std::string>();
    auto type = parse_loop_type(j.at("type").get<std::string>());
    auto status = parse_loop_status(j.at("status").get<std::string>());
    if (!type || !status)
      return make_error(ErrorCode::invalid_argument, "loop record " + l.id + " has a bad type or status");
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
    l.progress = j.value("progress", "");
    l.context = j.value("context", nlohmann::json::object());
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
    return make_error(ErrorCode::invalid_argument, std::string("malformed loop record: ") + e.what());
  }
}

nlohmann::json to_api_json(const Loop& l) {
  return {
      {"id", l.id},
      {"type", to_string(l.type)},
      {"status", to_string(l.status)},
      {"parent_id", l.parent_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.parent_id)},
      {"iteration", l.iteration},
      {"max_iterations", l.max_iterations},
      {"cost_usd", l.usage.cost_usd},
      {"input_tokens", l.usage.input_tokens},
      {"output_tokens", l.usage.output_tokens},
      {"artifacts", l.output_artifacts},
      {"worktree", l.worktree.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.worktree)},
      {"branch", l.branch.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.branch)},
      {"created_at", format_timestamp(l.created_at)},
      {"updated_at", format_timestamp(l.updated_at)},
  };
}

}  // namespace loopr
