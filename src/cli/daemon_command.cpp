// `loopr daemon [--foreground]`, `loopr daemon status`, `loopr daemon stop`.
#include <CLI/CLI.hpp>
#include <memory>
#include <thread>

#include <loopr/daemon/daemon.hpp>
#include <loopr/web/web_ui.hpp>

#include "cli/command.hpp"
#include "cli/commands.hpp"
#include "cli/daemon_client.hpp"
#include "cli/format.hpp"
#include "cli/preflight.hpp"
#include "cli/wire.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {

constexpr auto kStopTimeout = std::chrono::seconds(10);
constexpr auto kDefaultDrain = std::chrono::minutes(30);

}  // namespace

int run_daemon_command(Session& s, bool foreground, bool force) {
  const GlobalOptions& opts = s.opts;
  const RepoPaths& paths = s.paths();
  Config config = require_existing_config(paths);
  const std::string force_hint = "; `loopr daemon --force` starts it anyway";
  if (foreground) {
    refuse_if_any(daemon_start_problems(config, force), force_hint);
    auto r = daemon::run_daemon({paths.root, {}, force, loopr::web::make_web_ui});
    if (r) return kOk;
    const Error& e = r.error();
    if (e.code == ErrorCode::already_exists)
      throw CommandError{kFailed, e.message,
                         "`loopr daemon status` shows it; `loopr daemon stop` stops it"};
    if (e.code == ErrorCode::invalid_argument)
      throw CommandError{kUsage, e.message,
                         "fix the file; `loopr init` shows every key with its default"};
    throw CommandError{kFailed, "the daemon failed: " + e.message,
                       "see the lines above; LOOPR_LOG=debug says more"};
  }
  if (!DaemonClient(paths).health())
    refuse_if_any(daemon_start_problems(config, force), force_hint);
  DaemonStart started = start_daemon(paths, force);
  if (opts.json) {
    std::cout << json{{"pid", started.pid},
                      {"started", started.started},
                      {"socket", paths.socket().string()}}
                     .dump()
              << "\n";
  } else if (!opts.quiet) {
    if (started.started)
      std::cout << "loopr daemon started (pid " << started.pid << "), serving "
                << paths.root.string() << "; its log: " << daemon_out_file(paths).string() << "\n";
    else
      std::cout << "the loopr daemon already serves this repository (pid " << started.pid << ")\n";
  }
  return kOk;
}

int run_daemon_status(Session& s) {
  const GlobalOptions& opts = s.opts;
  const RepoPaths& paths = s.paths();
  DaemonClient api(paths);
  auto h = api.health();
  if (!h) {
    if (opts.json) std::cout << json{{"running", false}}.dump() << "\n";
    throw daemon_not_running(paths);
  }
  if (opts.json) {
    json out = api::to_json(*h);
    out.erase("ok");
    out["running"] = true;
    std::cout << out.dump() << "\n";
  } else if (!opts.quiet) {
    std::cout << render_health(*h, Style{stdout_color(opts)});
  }
  return kOk;
}

int run_daemon_stop(Session& s, bool drain, const std::string& timeout) {
  const GlobalOptions& opts = s.opts;
  const RepoPaths& paths = s.paths();
  auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(kDefaultDrain);
  if (!timeout.empty()) {
    auto d = parse_duration(timeout);
    if (!d || d->count() <= 0)
      throw CommandError{kUsage, "--timeout \"" + timeout + "\" is not a duration",
                         "write e.g. --timeout 30m or 90s"};
    limit = *d;
  }
  DaemonClient api(paths);
  auto h = api.health();
  if (!h) throw daemon_not_running(paths);
  long pid = h->pid;
  if (drain) {
    api.post("/v1/shutdown", api::to_json(api::ShutdownRequest{true, format_duration(limit)}));
    if (!opts.quiet && !opts.json)
      std::cerr << "draining: the iterations in flight finish and no new one starts (at most "
                << format_duration(limit) << "; `loopr daemon stop` stops at once)\n";
  } else {
    api.post("/v1/shutdown");
  }
  // A drain takes as long as the iterations in flight, at most its limit; then the stop itself.
  auto deadline = std::chrono::steady_clock::now() + kStopTimeout +
                  (drain ? limit : std::chrono::milliseconds(0));
  while (true) {
    bool answering = api.health(std::chrono::seconds(1)).has_value();
    bool alive = process_alive(pid);
    if (!answering && !alive) break;
    if (std::chrono::steady_clock::now() > deadline)
      throw CommandError{kFailed,
                         "the daemon (pid " + std::to_string(pid) + ") did not stop in time",
                         "see " + daemon_out_file(paths).string() + "; `kill " +
                             std::to_string(pid) + "` ends it"};
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (opts.json)
    std::cout << json{{"stopped", true}, {"pid", pid}}.dump() << "\n";
  else if (!opts.quiet)
    std::cout << "loopr daemon stopped (pid " << pid << ")\n";
  return kOk;
}

namespace {

CommandRun define_daemon(CLI::App& daemon) {
  struct Values {
    bool foreground = false, force = false, drain = false;
    std::string drain_timeout;
    CLI::App* status = nullptr;
    CLI::App* stop = nullptr;
  };
  auto v = std::make_shared<Values>();
  daemon.add_flag("--foreground", v->foreground,
                  "Run in this process until Ctrl-C, SIGTERM or `loopr daemon stop` (exit 1 if "
                  "another daemon serves the repository)");
  daemon.add_flag("--force", v->force,
                  "Start even if the model provider's prerequisites look unmet (API key, the "
                  "claude CLI)");
  daemon.require_subcommand(0, 1);
  v->status = daemon.add_subcommand(
      "status", "Is the daemon up: pid, uptime, loops by status (exit 3 if not running)");
  v->stop =
      daemon.add_subcommand("stop",
                            "Stop the daemon gracefully and wait until it has exited (exit 3 if "
                            "not running): running iterations are cut short, what they wrote is "
                            "checkpointed, and their loops resume when the daemon starts again");
  v->stop->add_flag("--drain", v->drain,
                    "Let the iterations in flight finish (model turns, validation, "
                    "checkpoint, record) and start no new one, then stop");
  v->stop
      ->add_option("--timeout", v->drain_timeout,
                   "With --drain: stop as without it once this has passed (default 30m)")
      ->option_text("D");
  auto run = [v](Session& s) {
    if (v->status->parsed()) return run_daemon_status(s);
    if (v->stop->parsed()) return run_daemon_stop(s, v->drain, v->drain_timeout);
    return run_daemon_command(s, v->foreground, v->force);
  };
  // In the foreground the daemon writes only its log.
  return CommandRun(run, [v] { return v->foreground; }).checked_by([v] {
    if (v->stop->parsed() && !v->drain && !v->drain_timeout.empty())
      throw CommandError{kUsage, "--timeout is the limit of a drain", "add --drain"};
  });
}

}  // namespace

const Command kDaemonCommand{"daemon",
                             "Run the service for this repository; without --foreground it "
                             "starts in the background and returns once it "
                             "answers (exit 0 also when it already runs)",
                             false, Needs::repo, define_daemon};

}  // namespace loopr::cli
