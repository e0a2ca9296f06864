// Byte sizes in the config: `4096`, `512K`, `64M`, `1G`, `2T` (powers of 1024; `KiB`/`KB` too).
#include <cctype>

#include <loopr/core/config.hpp>

namespace loopr {

std::optional<std::uint64_t> parse_size(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  std::size_t i = 0;
  std::uint64_t n = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    n = n * 10 + static_cast<std::uint64_t>(text[i] - '0');
    if (n > (1ULL << 50)) return std::nullopt;
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string unit;
  for (; i < text.size(); ++i)
    unit += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  int shift = 0;
  if (unit.empty() || unit == "B")
    shift = 0;
  else if (unit == "K" || unit == "KB" || unit == "KIB")
    shift = 10;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    shift = 20;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    shift = 30;
  else if (unit == "T" || unit == "TB" || unit == "TIB")
    shift = 40;
  else
    return std::nullopt;
  if (shift && n > (~0ULL >> shift)) return std::nullopt;
  return n << shift;
}

std::string format_size(std::uint64_t bytes) {
  if (bytes == 0) return "0";
  for (auto [shift, name] :
       {std::pair{40, "T"}, std::pair{30, "G"}, std::pair{20, "M"}, std::pair{10, "K"}})
    if (bytes % (1ULL << shift) == 0) return std::to_string(bytes >> shift) + name;
  return std::to_string(bytes);
}

}  // namespace loopr
