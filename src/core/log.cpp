#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <loopr/core/log.hpp>

namespace loopr {

std::optional<spdlog::level::level_enum> parse_log_level(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "trace") return spdlog::level::trace;
  if (t == "debug") return spdlog::level::debug;
  if (t == "info") return spdlog::level::info;
  if (t == "warn" || t == "warning") return spdlog::level::warn;
  if (t == "error") return spdlog::level::err;
  return std::nullopt;
}

namespace {

constexpr std::size_t kDefaultLogBytes = 10 * 1024 * 1024;

// The daemon log's size before it rotates (daemon.log → daemon.1.log … daemon.3.log, the oldest
// dropped): LOOPR_LOG_MAX_BYTES, else 10 MiB. nullopt for a bad value (the default is used).
std::optional<std::size_t> log_max_bytes() {
  const char* env = std::getenv("LOOPR_LOG_MAX_BYTES");
  if (!env || !*env) return kDefaultLogBytes;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(env, &end, 10);
  if (*end != '\0' || n < 1024 || n > (1ull << 40)) return std::nullopt;
  return static_cast<std::size_t>(n);
}

}  // namespace

bool setup_logging(spdlog::level::level_enum fallback, const std::optional<std::string>& file) {
  bool good = true;
  auto level = fallback;
  if (const char* env = std::getenv("LOOPR_LOG"); env && *env) {
    if (auto parsed = parse_log_level(env)) level = *parsed;
    else good = false;
  }
  std::shared_ptr<spdlog::logger> logger;
  const std::optional<std::size_t> max_bytes = log_max_bytes();
  if (file) {
    logger = spdlog::rotating_logger_mt("loopr", *file, max_bytes.value_or(kDefaultLogBytes),
                                        kLogFiles);
  } else {
    logger = spdlog::stderr_color_mt("loopr");
  }
  logger->set_level(level);
  logger->set_pattern(file ? "%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v" : "loopr: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  if (!good) spdlog::warn("LOOPR_LOG must be trace|debug|info|warn|error; using the default level");
  if (file && !max_bytes)
    spdlog::warn("LOOPR_LOG_MAX_BYTES must be a number of bytes from 1024; using 10 MiB");
  return good;
}

}  // namespace loopr
