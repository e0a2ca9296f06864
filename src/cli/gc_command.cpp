// `loopr gc [--dry-run] [--older-than D]`: removes the worktrees and branches of trees that
// ended (manager/gc.hpp says what and why). The daemon does it when one serves the repository
// (it holds the store and knows which loops run); the CLI does it on the store otherwise.
#include <loopr/daemon/offline.hpp>

#include "cli/commands.hpp"
#include "cli/daemon_client.hpp"
#include "cli/format.hpp"
#include "cli/maintenance_view.hpp"

namespace loopr::cli {

int run_gc(const GlobalOptions& opts, bool dry_run, const std::string& older_than) {
  RepoPaths paths(require_repo(opts));
  Config config = require_config(paths);
  manager::GcOptions options = manager::GcOptions::from(config, now_ms());
  options.dry_run = dry_run;
  if (!older_than.empty()) {
    auto d = parse_duration(older_than);
    if (!d)
      throw CommandError{kUsage, "--older-than \"" + older_than + "\" is not a duration",
                         "write e.g. --older-than 7d, 12h or 0s"};
    options.older_than = *d;
  }
  nlohmann::json report;
  DaemonClient api(paths);
  if (api.health()) {
    nlohmann::json body = {{"dry_run", dry_run}};
    if (!older_than.empty()) body["older_than"] = older_than;
    report = api.post("/v1/gc", body, std::chrono::minutes(30));
  } else {
    auto done = daemon::gc_without_daemon(paths, config, options);
    if (!done && done.error().code == ErrorCode::conflict)
      throw CommandError{kDaemonUnreachable, done.error().message,
                         "wait until the daemon has started or stopped, then try again"};
    if (!done)
      throw CommandError{kFailed, "gc failed: " + done.error().message, "see `loopr doctor`"};
    report = std::move(*done);
  }
  const api::GcView view = api::gc_from_json(report);
  if (opts.json)
    std::cout << report.dump() << "\n";
  else if (!opts.quiet)
    std::cout << render_gc(view, Style{stdout_color(opts)});
  return view.errors.empty() ? kOk : kFailed;
}

}  // namespace loopr::cli
