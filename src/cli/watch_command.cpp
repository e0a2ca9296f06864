// `loopr logs [ID] [-f]` (the event log, following across daemon restarts) and `loopr watch`
// (the live tree).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "cli/command.hpp"
#include "cli/commands.hpp"
#include "cli/coordination.hpp"
#include "cli/daemon_client.hpp"
#include "cli/format.hpp"
#include "cli/terminal.hpp"
#include "cli/tree_view.hpp"
#include "cli/wire.hpp"

namespace loopr::cli {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// How long `logs` without -f waits for more stored events before it decides it has them all.
constexpr auto kFirstEventWait = std::chrono::milliseconds(1500);
constexpr auto kQuietGap = std::chrono::milliseconds(400);

}  // namespace

namespace {

/// Prints the stream's events, each once (by seq): a line each, or (--json) as the daemon sent
/// them, at once with -f, else collected into one document.
struct EventPrinter {
  EventPrinter(const GlobalOptions& o, bool f) : opts(o), follow(f), style{stdout_color(o)} {}
  const GlobalOptions& opts;
  bool follow;
  Style style;
  std::uint64_t last_seq = 0;
  json collected = json::array();
  std::atomic<std::int64_t> last_activity{0};  ///< steady-clock ticks of the last message

  bool operator()(const StreamMessage& m) {
    last_activity.store(Clock::now().time_since_epoch().count());
    json raw = json::parse(m.data, nullptr, false);
    auto e = event_of(raw);
    if (!e) return true;
    if (e->seq != 0 && e->seq <= last_seq) return true;
    last_seq = std::max(last_seq, e->seq);
    if (opts.json) {
      // Passed on as the daemon sent it (a newer daemon's fields included).
      if (follow)
        std::cout << raw.dump(-1, ' ', false, json::error_handler_t::replace) << "\n" << std::flush;
      else
        collected.push_back(std::move(raw));
    } else if (!opts.quiet) {
      std::cout << format_event_line(*e, style) << "\n" << std::flush;
    }
    return true;
  }
};

// `logs` without -f: the stream sends the stored events first, all at once, then live ones: stop
// at the first quiet moment after them.
int print_stored_events(DaemonClient& api, const RepoPaths& paths, const std::string& query,
                        EventPrinter& printer) {
  std::atomic<bool> cancel{false};
  auto started = Clock::now();
  std::thread watchdog([&] {
    while (!cancel.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::int64_t last = printer.last_activity.load();
      bool idle = last == 0 ? Clock::now() - started > kFirstEventWait
                            : Clock::now() - Clock::time_point(Clock::duration(last)) > kQuietGap;
      if (idle || g_interrupted.load()) cancel.store(true);
    }
  });
  auto r = api.stream("/v1/events?since=0" + query, std::ref(printer), &cancel);
  cancel.store(true);
  watchdog.join();
  if (!r && r.error().code == ErrorCode::not_found) throw daemon_not_running(paths);
  if (printer.opts.json)
    std::cout << json{{"events", printer.collected}}.dump(-1, ' ', false,
                                                          json::error_handler_t::replace)
              << "\n";
  return kOk;
}

// -f: follow until Ctrl-C; when the daemon goes away, wait for it and resume after the last event
// seen.
int follow_events(DaemonClient& api, const RepoPaths& paths, const std::string& query,
                  EventPrinter& printer) {
  const bool quiet = printer.opts.quiet;
  bool first = true;
  bool announced = false;
  while (!g_interrupted.load()) {
    auto r = api.stream(
        "/v1/events?since=" + std::to_string(printer.last_seq) + query,
        [&](const StreamMessage& m) {
          if (announced && !quiet) std::cerr << "loopr: reconnected to the daemon\n";
          announced = false;
          return printer(m);
        },
        &g_interrupted);
    if (g_interrupted.load()) break;
    if (first && !r && r.error().code == ErrorCode::not_found) throw daemon_not_running(paths);
    first = false;
    if (!announced && !quiet)
      std::cerr << "loopr: lost the daemon (" << (r ? "stream ended" : r.error().message)
                << "); reconnecting when it is back (Ctrl-C to quit)\n";
    announced = true;
    for (int i = 0; i < 5 && !g_interrupted.load(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return kOk;
}

}  // namespace

int run_logs(Session& s, const std::string& id, bool follow) {
  const GlobalOptions& opts = s.opts;
  const RepoPaths& paths = s.paths();
  DaemonClient& api = s.api();
  if (!id.empty()) show_loop(api, id);  // unknown id → exit 4
  install_interrupt_handlers();
  EventPrinter printer(opts, follow);
  const std::string query = id.empty() ? "" : "&loop=" + url_encode(id);
  return follow ? follow_events(api, paths, query, printer)
                : print_stored_events(api, paths, query, printer);
}

namespace {

// One frame of `loopr watch`: the header (loops, cost, clock), the tree and the open questions;
// `frame` >= 0 animates the running loops' spinner.
std::string watch_frame(const std::vector<api::LoopRow>& loops, const Style& style, bool live,
                        bool daemon_gone, int frame) {
  static const char* const spinner[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
  double cost = 0;
  for (const auto& l : loops) cost += l.cost_usd;
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char clock[16];
  std::strftime(clock, sizeof clock, "%H:%M:%S", &tm);
  std::string head = style.bold("loopr watch") + "  " + std::to_string(loops.size()) + " loops  " +
                     format_cost(cost) + "  " + style.dim(clock);
  if (live) head += style.dim("  Ctrl-C quits");
  if (daemon_gone) head += "  " + style.red("daemon not reachable, retrying…");
  std::string out = head + "\n";
  if (loops.empty())
    out += "no loops yet; `loopr submit \"…\"` starts a plan\n";
  else
    out += render_tree_table(loops, style, now_ms(), [&](const api::LoopRow& l) -> std::string {
      if (frame < 0) return "";
      return l.status == LoopStatus::running ? std::string(spinner[frame % 10]) + " " : "  ";
    });
  for (const auto& line : question_lines(loops, style)) out += line + "\n";
  return out;
}

}  // namespace

int run_watch(Session& s) {
  const GlobalOptions& opts = s.opts;
  DaemonClient& api = s.api();
  std::vector<api::LoopRow> loops = list_loops(api);  // not running → exit 3
  install_interrupt_handlers();
  Style style{stdout_color(opts)};
  bool live = !opts.json && is_terminal(STDOUT_FILENO);
  EventWatcher events(api, "");
  LiveView view(std::cout);
  std::optional<HiddenCursor> cursor;
  if (live) cursor.emplace();
  auto last_fetch = Clock::now();
  std::string last_printed = "\x01";  // nothing printed yet
  bool daemon_gone = false;
  int frame = 0;

  auto signature = [&] {
    std::string s = daemon_gone ? "gone;" : "";
    for (const auto& l : loops)
      s += l.id + ":" + to_string(l.status) + ":" + std::to_string(l.iteration) + ":" +
           std::to_string(l.cost_usd) + ";";
    return s;
  };

  while (!g_interrupted.load()) {
    if (events.take_changed() || Clock::now() - last_fetch > std::chrono::seconds(1)) {
      last_fetch = Clock::now();
      try {
        loops = list_loops(api);
        daemon_gone = false;
      } catch (const CommandError& e) {
        if (e.exit_code != kDaemonUnreachable) throw;
        daemon_gone = true;
      }
      std::string sig = signature();
      if (!live && sig != last_printed) {
        if (opts.json) {
          json out = json::array();
          for (const auto& l : loops) out.push_back(interface_loop_json(l));
          std::cout << json{{"loops", out}}.dump() << "\n" << std::flush;
        } else if (!opts.quiet) {
          std::cout << watch_frame(loops, style, live, daemon_gone, -1) << "\n" << std::flush;
        }
      }
      last_printed = sig;
    }
    if (live) {
      std::vector<std::string> lines;
      std::istringstream in(watch_frame(loops, style, live, daemon_gone, frame));
      for (std::string line; std::getline(in, line);) lines.push_back(line);
      view.show(lines);
    }
    ++frame;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (live) view.finish();
  return kOk;
}

namespace {

CommandRun define_logs(CLI::App& logs) {
  struct Values {
    std::string id;
    bool follow = false;
  };
  auto v = std::make_shared<Values>();
  logs.add_option("id", v->id, "Only this loop and its descendants");
  logs.add_flag("-f,--follow", v->follow,
                "Keep printing new events until Ctrl-C; survives a daemon restart (--json: one "
                "event per line)");
  return CommandRun([v](Session& s) { return run_logs(s, v->id, v->follow); });
}

CommandRun define_watch(CLI::App&) {
  return CommandRun([](Session& s) { return run_watch(s); });
}

}  // namespace

const Command kLogsCommand{"logs",
                           "The event log, of everything or of one loop and its descendants", false,
                           Needs::daemon, define_logs};
const Command kWatchCommand{
    "watch",
    "The live loop tree, redrawn in place until Ctrl-C (printed on change when not a terminal)",
    false, Needs::daemon, define_watch};

}  // namespace loopr::cli
