// The CLI's side of the control API (src/daemon/API.md): calls that end in a CommandError with
// INTERFACE.md's exit code (3 nothing listens, 4 unknown id, 5 wrong state, 2 bad request), and
// starting the daemon in the background when a command needs it. Keeps Asio out of the
// commands: only daemon_client.cpp includes the transport.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include <loopr/api/views.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/core/result.hpp>
#include <loopr/core/url.hpp>

#include "cli/context.hpp"

namespace loopr::cli {

/// One server-sent event of `GET /v1/events`.
struct StreamMessage {
  std::string id;
  std::string event;
  std::string data;
};

/// A repository's daemon, reached through its socket. Every call opens its own connection.
class DaemonClient {
 public:
  explicit DaemonClient(RepoPaths paths) : paths_(std::move(paths)) {}

  const RepoPaths& paths() const { return paths_; }

  /// GET/POST returning the answer's JSON; any failure is a CommandError (see the file comment).
  nlohmann::json get(const std::string& target) const;
  /// GET returning the answer's text as it came (a 2xx); failures as `get`.
  std::string get_text(const std::string& target) const;
  /// `timeout`: how long the daemon may take (a merge may run the test command first).
  nlohmann::json post(const std::string& target, const nlohmann::json& body = nullptr,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

  /// `GET /v1/health` as its view, or nullopt when no daemon answers (nothing listens, or it is
  /// shutting down).
  std::optional<api::Health> health(
      std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;

  /// Reads the SSE stream `target` until `on_message` returns false or `cancel` becomes true
  /// (ok), or the connection fails or ends (the error: ErrorCode::not_found when nothing listens).
  Result<void> stream(const std::string& target,
                      const std::function<bool(const StreamMessage&)>& on_message,
                      const std::atomic<bool>* cancel) const;

 private:
  RepoPaths paths_;
};

/// The CommandError for an API answer that is not 2xx: 404 → 4, 409 → 5, 400 → 2, 503 → 3, else 1.
/// The daemon's `{"error":"what (what to do)"}` becomes `what` and `hint`.
CommandError api_error(int status, const nlohmann::json& body);

/// The CommandError for "no daemon serves this repository" (exit 3).
CommandError daemon_not_running(const RepoPaths& paths);

/// The daemon of the repository `opts` names; CommandError (exit 3) if none answers.
DaemonClient connect(const RepoPaths& paths);

/// What `start_daemon` did.
struct DaemonStart {
  long pid = 0;          ///< the daemon's pid (from /v1/health)
  bool started = false;  ///< false: one was already running
};

/// Starts `loopr -C ROOT daemon --foreground` detached (own session, stdin /dev/null, output
/// appended to `.loopr/logs/daemon.out`) unless one answers already, and waits until
/// `GET /v1/health` answers (10 s at most). A daemon that does not come up is a CommandError
/// (exit 3) quoting the end of daemon.out. `force`: it starts with `--force`.
DaemonStart start_daemon(const RepoPaths& paths, bool force = false);

/// `connect`, starting the daemon first when none answers (says so on stderr unless quiet).
DaemonClient connect_or_start(const RepoPaths& paths, const GlobalOptions& opts,
                              bool force = false);

/// True while `pid` runs (a zombie counts as gone: a detached daemon is no child of ours and
/// not every init reaps at once).
bool process_alive(long pid);

/// The daemon's output file for detached starts.
std::filesystem::path daemon_out_file(const RepoPaths& paths);

using loopr::url_encode;  ///< a query parameter value (core/url.hpp)

}  // namespace loopr::cli
