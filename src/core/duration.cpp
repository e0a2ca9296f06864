#include <cctype>
#include <cstdint>

#include <loopr/core/config.hpp>

namespace loopr {

std::optional<Duration> parse_duration(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  if (text == "0") return Duration::zero();
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    std::int64_t n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      n = n * 10 + (text[i] - '0');
      if (n > 1'000'000'000) return std::nullopt;
      ++i;
    }
    std::int64_t unit = 0;
    if (text.substr(i, 2) == "ms") {
      unit = 1;
      i += 2;
    } else if (i < text.size()) {
      switch (text[i]) {
        case 's': unit = 1000; break;
        case 'm': unit = 60'000; break;
        case 'h': unit = 3'600'000; break;
        case 'd': unit = 86'400'000; break;
        default: return std::nullopt;
      }
      ++i;
    } else {
      return std::nullopt;  // a number without a unit is ambiguous
    }
    total += n * unit;
  }
  return Duration(total);
}

std::string format_duration(Duration d) {
  std::int64_t ms = d.count();
  if (ms == 0) return "0s";
  struct Unit {
    std::int64_t ms;
    const char* name;
  };
  for (Unit u : {Unit{86'400'000, "d"}, Unit{3'600'000, "h"}, Unit{60'000, "m"}, Unit{1000, "s"}})
    if (ms % u.ms == 0) return std::to_string(ms / u.ms) + u.name;
  return std::to_string(ms) + "ms";
}

}  // namespace loopr
