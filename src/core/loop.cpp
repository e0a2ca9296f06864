#include <chrono>
#include <cstdio>
#include <ctime>

#include <loopr/core/loop.hpp>

namespace loopr {

const char* to_string(LoopType type) {
  switch (type) {
    case LoopType::plan:
      return "plan";
    case LoopType::spec:
      return "spec";
    case LoopType::phase:
      return "phase";
    case LoopType::code:
      return "code";
  }
  return "plan";
}

const char* to_string(LoopStatus status) {
  switch (status) {
    case LoopStatus::pending:
      return "pending";
    case LoopStatus::running:
      return "running";
    case LoopStatus::paused:
      return "paused";
    case LoopStatus::rebasing:
      return "rebasing";
    case LoopStatus::blocked:
      return "blocked";
    case LoopStatus::awaiting_approval:
      return "awaiting_approval";
    case LoopStatus::awaiting_answer:
      return "awaiting_answer";
    case LoopStatus::complete:
      return "complete";
    case LoopStatus::failed:
      return "failed";
    case LoopStatus::stopped:
      return "stopped";
    case LoopStatus::invalidated:
      return "invalidated";
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

}  // namespace loopr
