// The pure part of the retry rules: header parsing and the wait before a retry.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include <loopr/llm/retry.hpp>

namespace loopr::llm {

using std::chrono::milliseconds;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A non-negative decimal number ("2", "1.5"); nullopt otherwise.
std::optional<double> parse_number(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !(v >= 0) || std::isinf(v))
    return std::nullopt;
  return v;
}

/// IMF-fixdate, the only date form RFC 9110 lets servers send: `Sun, 06 Nov 1994 08:49:37 GMT`.
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view s) {
  auto comma = s.find(", ");
  if (comma == std::string_view::npos) return std::nullopt;
  std::string rest(s.substr(comma + 2));
  int day = 0, year = 0, hh = 0, mm = 0, ss = 0;
  char mon[4] = {};
  char zone[4] = {};
  if (std::sscanf(rest.c_str(), "%2d %3s %4d %2d:%2d:%2d %3s", &day, mon, &year, &hh, &mm, &ss,
                  zone) != 7 ||
      std::strcmp(zone, "GMT") != 0)
    return std::nullopt;
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  unsigned month = 0;
  for (unsigned i = 0; i < 12; ++i)
    if (std::strcmp(mon, kMonths[i]) == 0) month = i + 1;
  using namespace std::chrono;
  year_month_day ymd{std::chrono::year{year}, std::chrono::month{month},
                     std::chrono::day{static_cast<unsigned>(day)}};
  if (month == 0 || !ymd.ok() || hh > 23 || mm > 59 || ss > 60) return std::nullopt;
  return sys_days{ymd} + hours{hh} + minutes{mm} + seconds{ss};
}

}  // namespace

RetryPolicy retry_policy(const LlmConfig& config) {
  RetryPolicy p;
  p.max_retries = std::max(0, config.max_retries);
  return p;
}

std::optional<bool> parse_should_retry(std::string_view value) {
  value = trim(value);
  if (value == "true") return true;
  if (value == "false") return false;
  return std::nullopt;
}

std::optional<milliseconds> parse_retry_after_ms(std::string_view value) {
  auto v = parse_number(value);
  if (!v) return std::nullopt;
  return milliseconds(static_cast<std::int64_t>(std::ceil(*v)));
}

std::optional<milliseconds> parse_retry_after(std::string_view value,
                                              std::chrono::system_clock::time_point now) {
  if (auto secs = parse_number(value))
    return milliseconds(static_cast<std::int64_t>(std::ceil(*secs * 1000)));
  auto date = parse_http_date(trim(value));
  if (!date) return std::nullopt;
  auto wait = std::chrono::ceil<milliseconds>(*date - now);
  return std::max(wait, milliseconds(0));
}

std::optional<milliseconds> retry_delay(const RetryPolicy& policy, const LlmError& error,
                                        int attempt, double random01) {
  if (!error.retryable || attempt < 1 || attempt > policy.max_retries) return std::nullopt;
  if (error.retry_after) return std::min(*error.retry_after, policy.max_server_wait);
  // Exponential backoff; jitter keeps many loops that failed together from retrying together.
  double base = static_cast<double>(policy.initial_backoff.count()) *
                std::pow(2.0, std::min(attempt - 1, 30));
  base = std::min(base, static_cast<double>(policy.max_backoff.count()));
  double r = std::clamp(random01, 0.0, 1.0);
  double wait = base * (1.0 - policy.jitter * r);
  return milliseconds(static_cast<std::int64_t>(wait));
}

}  // namespace loopr::llm
