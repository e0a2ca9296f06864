// How figures read to a person (figures.hpp): the CLI's tables and the web pages print the same.
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include <loopr/core/figures.hpp>

namespace loopr {

std::string format_cost(double usd) {
  if (usd == 0) return "$0";
  char buf[32];
  if (std::fabs(usd) < 0.01)
    std::snprintf(buf, sizeof buf, "$%.3f", usd);
  else
    std::snprintf(buf, sizeof buf, "$%.2f", usd);
  return buf;
}

std::string format_age(std::int64_t ms) {
  if (ms < 0) ms = 0;
  std::int64_t s = ms / 1000;
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m";
  if (s < 86400) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

std::string format_elapsed(std::int64_t ms) {
  if (ms < 0) ms = 0;
  std::int64_t s = ms / 1000;
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%" PRId64 "s", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%" PRId64 "h%02" PRId64 "m", s / 3600, (s % 3600) / 60);
  return buf;
}

std::string format_count(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace loopr
