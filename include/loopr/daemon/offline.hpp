// What the CLI does with the store itself when no daemon serves the repository: RocksDB admits
// one process at a time, and a running daemon holds `.loopr/state/` for its whole life, so these
// are for when none runs (a daemon that does answers the same questions over its API).
#pragma once

#include <nlohmann/json.hpp>

#include <loopr/core/config.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/core/result.hpp>
#include <loopr/manager/gc.hpp>

namespace loopr::daemon {

/// `GET /v1/stats`'s answer (manager/stats.hpp) from the store in `paths`, read here; a
/// repository without a store yet has empty stats. ErrorCode::conflict when another process
/// holds the store (a daemon starting or stopping).
Result<nlohmann::json> stats_without_daemon(const RepoPaths& paths, const Config& config,
                                            TimestampMs since);

/// `loopr gc` (manager/gc.hpp) on the store in `paths`, held by this process for the run, with
/// `options`; its report as `POST /v1/gc` answers it. ErrorCode::conflict as above.
Result<nlohmann::json> gc_without_daemon(const RepoPaths& paths, const Config& config,
                                         const manager::GcOptions& options);

}  // namespace loopr::daemon
