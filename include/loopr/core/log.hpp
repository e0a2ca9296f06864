// Logging setup: the one place that configures spdlog (level from LOOPR_LOG).
#pragma once

#include <optional>
#include <string>

#include <spdlog/spdlog.h>

namespace loopr {

/// Parses `trace|debug|info|warn|error` (case-insensitive); nullopt if unknown.
std::optional<spdlog::level::level_enum> parse_log_level(const std::string& text);

/// The daemon log's files: `daemon.log` and, rotated, `daemon.1.log` … `daemon.3.log`.
inline constexpr std::size_t kLogFiles = 3;

/// Sets the default logger to stderr (or, when `file` is given, a file that rotates at
/// LOOPR_LOG_MAX_BYTES, default 10 MiB, keeping kLogFiles older ones) at the level from
/// LOOPR_LOG (default `fallback`). Returns false and keeps `fallback` if LOOPR_LOG is bad.
bool setup_logging(spdlog::level::level_enum fallback = spdlog::level::warn,
                   const std::optional<std::string>& file = std::nullopt);

}  // namespace loopr
