// `loopr daemon --foreground`: the service of one repository (DESIGN.md "Processes and
// interfaces"). Runs every loop as a coroutine on one io_context, serves the control API
// (src/daemon/API.md) on `.loopr/run/loopr.sock`, and is the only writer of `.loopr/state/`.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <loopr/core/result.hpp>

namespace loopr::daemon {

class FrontEnd;       // loopr/daemon/front_end.hpp
struct FrontEndDeps;  // loopr/daemon/front_end.hpp

/// Makes the web UI when `POST /v1/web` asks for it (src/web/: loopr::web::make_web_ui).
using FrontEndFactory = std::function<std::unique_ptr<FrontEnd>(const FrontEndDeps&)>;

struct DaemonOptions {
  std::filesystem::path repo;  ///< the repository's work tree root (has .loopr/config.yml)
  /// Environment lookup (API keys, LOOPR_* overrides); default: getenv.
  std::function<std::optional<std::string>(const char*)> env;
  /// Start even if the provider's prerequisites look unmet (loopr/core/preflight.hpp); without
  /// it, run_daemon refuses (ErrorCode::invalid_argument, `what (what to do)`).
  bool force = false;
  /// The web UI (`loopr web`); empty: `POST /v1/web` answers 503, this daemon serves none.
  FrontEndFactory web;
};

/// Runs the daemon in this process until SIGTERM/SIGINT or `POST /v1/shutdown`, then stops
/// gracefully. Errors before it serves: another live daemon (ErrorCode::already_exists, the
/// message names its pid), a bad config (ErrorCode::invalid_argument, `FILE:LINE: key: problem`),
/// the store or the socket (ErrorCode::io).
Result<void> run_daemon(const DaemonOptions& options);

/// At most this many malloc arenas (glibc) in the daemon: the main one and one more.
inline constexpr int kMallocArenas = 2;

/// Called by run_daemon before it starts a thread: glibc gives each new thread an arena of its
/// own (up to 8 per core), a loop's work is allocated on one pool thread and freed on another,
/// and a non-main arena hands back only the pages at its top, so a daemon serving tree after
/// tree kept ~24 KiB more per tree than it used (tools/bench/RESULTS.md, the soak). The
/// person's own MALLOC_ARENA_MAX (or glibc.malloc.arena_max in GLIBC_TUNABLES) is left to glibc.
void bound_malloc_arenas();

}  // namespace loopr::daemon
