// `loopr stats [--since D]`: what loopr has spent, per plan and in total. Asked of the daemon
// when one serves the repository (it holds the store); read from the store here otherwise.
#include <CLI/CLI.hpp>
#include <memory>

#include <loopr/daemon/offline.hpp>

#include "cli/command.hpp"
#include "cli/commands.hpp"
#include "cli/daemon_client.hpp"
#include "cli/format.hpp"
#include "cli/maintenance_view.hpp"

namespace loopr::cli {

int run_stats(Session& s, const std::string& since) {
  const GlobalOptions& opts = s.opts;
  const RepoPaths& paths = s.paths();
  const Config& config = s.config();
  TimestampMs since_ms = 0;
  if (!since.empty()) {
    auto back = parse_duration(since);
    if (!back || back->count() <= 0)
      throw CommandError{kUsage, "--since \"" + since + "\" is not a duration",
                         "write e.g. --since 7d, 12h or 30m"};
    since_ms = now_ms() - back->count();
  }
  nlohmann::json stats;
  DaemonClient api(paths);
  if (api.health()) {
    stats = api.get("/v1/stats" + (since.empty() ? std::string() : "?since=" + url_encode(since)));
  } else {
    auto read = daemon::stats_without_daemon(paths, config, since_ms);
    if (!read && read.error().code == ErrorCode::conflict)
      throw CommandError{kDaemonUnreachable, read.error().message,
                         "wait until the daemon has started or stopped, then try again"};
    if (!read)
      throw CommandError{kFailed, "cannot read the store: " + read.error().message,
                         "see `loopr doctor`"};
    stats = std::move(*read);
  }
  if (opts.json)
    std::cout << stats.dump() << "\n";
  else if (!opts.quiet)
    std::cout << render_stats(api::stats_from_json(stats), Style{stdout_color(opts)});
  return kOk;
}

namespace {

CommandRun define_stats(CLI::App& stats) {
  auto since = std::make_shared<std::string>();
  stats.add_option("--since", *since, "Only what happened in this last stretch, e.g. 7d or 12h")
      ->option_text("D");
  return CommandRun([since](Session& s) { return run_stats(s, *since); });
}

}  // namespace

const Command kStatsCommand{
    "stats",
    "What loopr has spent, per plan and in total: cost, tokens, model calls, iterations, loops "
    "by outcome, wall time (from the store; works without the daemon)",
    false, Needs::config, define_stats};

}  // namespace loopr::cli
