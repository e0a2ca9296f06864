#include "cli/tree_view.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <sstream>

#include <loopr/core/ids.hpp>

#include "cli/coordination.hpp"
#include "cli/format.hpp"
#include "cli/review.hpp"
#include "cli/terminal.hpp"

namespace loopr::cli {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

int terminal_height() {
  struct winsize ws {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) return ws.ws_row;
  return 40;
}

const char* const kSpinner[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};

}  // namespace

void LiveView::show(const std::vector<std::string>& lines) {
  std::size_t width = static_cast<std::size_t>(std::max(terminal_width() - 1, 10));
  std::size_t max_lines = static_cast<std::size_t>(std::max(terminal_height() - 1, 3));
  std::string frame;
  if (shown_ > 0) frame += "\x1b[" + std::to_string(shown_) + "F";
  int count = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i + 1 == max_lines && lines.size() > max_lines) {
      frame += "… " + std::to_string(lines.size() - i) + " more\x1b[K\n";
      ++count;
      break;
    }
    frame += truncate_visible(lines[i], width) + "\x1b[K\n";
    ++count;
  }
  frame += "\x1b[J";
  out_ << frame << std::flush;
  shown_ = count;
}

EventWatcher::EventWatcher(const Api& api, std::string query)
    : api_(api), query_(std::move(query)) {
  thread_ = std::thread([this] { run(); });
}

EventWatcher::~EventWatcher() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void EventWatcher::run() {
  std::uint64_t last_seq = 0;
  while (!stop_.load()) {
    auto r = api_.stream(
        "/v1/events?since=" + std::to_string(last_seq) + query_,
        [&](const StreamMessage& m) {
          connected_.store(true);
          json e = json::parse(m.data, nullptr, false);
          if (e.is_object())
            last_seq = std::max<std::uint64_t>(last_seq, e.value("seq", std::uint64_t{0}));
          changed_.store(true);
          return !stop_.load();
        },
        &stop_);
    connected_.store(false);
    changed_.store(true);
    (void)r;
    for (int i = 0; i < 5 && !stop_.load(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::string submit_plan(const Api& api, const std::string& request, const json& fields) {
  json body = fields.is_object() ? fields : json::object();
  body["request"] = request;
  json r = api.post("/v1/plans", body);
  std::string id = str_field(r, "id");
  if (id.empty())
    throw CommandError{kFailed, "the daemon answered without an id", "see .loopr/logs/daemon.out"};
  return id;
}

namespace {

json tree_of(const Api& api, const std::string& plan_id) {
  json all = api.get("/v1/loops?plan=" + plan_id);
  json mine = json::array();
  for (const auto& l : all.value("loops", json::array()))
    if (root_plan_id(str_field(l, "id")) == plan_id) mine.push_back(l);
  return mine;
}

// What a change worth printing again looks like (not the ages and spinner that move anyway).
std::string tree_signature(const json& loops) {
  std::string s;
  for (const auto& l : loops)
    s += str_field(l, "id") + ":" + str_field(l, "status") + ":" +
         std::to_string(l.value("iteration", 0)) + ";";
  return s;
}

double tree_cost(const json& loops) {
  double c = 0;
  for (const auto& l : loops) c += l.value("cost_usd", 0.0);
  return c;
}

}  // namespace

int wait_for_plan(const Api& api, const GlobalOptions& opts, const std::string& plan_id, bool yes) {
  install_interrupt_handlers();
  std::ostream& ui = ui_stream(opts);
  bool live = !opts.json && !opts.quiet && is_terminal(STDOUT_FILENO);
  bool print_changes = !opts.json && !opts.quiet && !live;
  Style style{stdout_color(opts)};
  EventWatcher events(api, "&loop=" + url_encode(plan_id));
  LiveView view(std::cout);
  std::optional<HiddenCursor> cursor;
  if (live) cursor.emplace();
  auto started = Clock::now();
  auto last_fetch = Clock::time_point{};
  std::string last_signature;
  json loops = json::array();
  int frame = 0;
  bool daemon_gone = false;
  int decided_at = 0;  // the plan iteration the gate was last answered for

  auto render = [&](bool spinner) {
    std::vector<std::string> lines;
    std::int64_t elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
    std::string head = style.bold("plan " + plan_id) + "  " + format_elapsed(elapsed) + "  " +
                       format_cost(tree_cost(loops));
    if (daemon_gone) head += "  " + style.red("daemon not reachable, retrying…");
    lines.push_back(head);
    std::string table =
        render_tree_table(loops, style, now_ms(), [&](const json& l) -> std::string {
          if (!spinner) return "";
          return str_field(l, "status") == "running" ? std::string(kSpinner[frame % 10]) + " "
                                                     : "  ";
        });
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (auto& line : question_lines(loops, style)) lines.push_back(std::move(line));
    return lines;
  };

  while (true) {
    if (g_interrupted.load()) {
      if (live) view.finish();
      throw CommandError{kInterrupted,
                         "stopped waiting for " + plan_id + "; its loops go on in the daemon",
                         "`loopr watch` shows them, `loopr stop " + plan_id + "` stops them"};
    }
    bool changed = events.take_changed();
    if (changed || Clock::now() - last_fetch > std::chrono::seconds(1)) {
      last_fetch = Clock::now();
      try {
        loops = tree_of(api, plan_id);
        daemon_gone = false;
      } catch (const CommandError& e) {
        if (e.exit_code != kDaemonUnreachable) throw;
        daemon_gone = true;  // a restart: keep waiting, the tree resumes with the daemon
      }
      std::string sig = tree_signature(loops);
      if (print_changes && sig != last_signature) {
        for (const auto& l : render(false)) std::cout << l << "\n";
        std::cout << std::flush;
      }
      last_signature = sig;

      // The gate (once per plan iteration: the list may still show the plan waiting right after
      // a decision).
      bool gated = false;
      for (const auto& l : loops) {
        if (str_field(l, "id") != plan_id || str_field(l, "status") != "awaiting_approval")
          continue;
        if (l.value("iteration", 0) <= decided_at) continue;
        decided_at = l.value("iteration", 0);
        if (live) {
          view.show(render(false));
          view.finish();
        }
        if (yes) {
          api.post("/v1/loops/" + plan_id + "/approve");
          if (!opts.quiet) ui << "approved " << plan_id << " (--yes)\n";
        } else {
          cursor.reset();
          Prompter prompter(STDIN_FILENO, ui);
          ReviewDecision d = review_plan(api, l, prompter, ui, style);
          if (d.decision == "skip") {
            if (!opts.quiet)
              ui << "stopped waiting: " << plan_id << " awaits approval; `loopr review " << plan_id
                 << "` decides, `loopr watch` follows\n";
            return kOk;
          }
          if (live) cursor.emplace();
        }
        gated = true;
        break;
      }
      if (gated) {
        last_fetch = Clock::time_point{};  // look again before drawing
        continue;
      }

      // The daemon says where the tree stands (the plan row's `tree_verdict`).
      json plan = json::object();
      for (const auto& l : loops)
        if (str_field(l, "id") == plan_id) plan = l;
      const std::string verdict = str_field(plan, "tree_verdict");
      if (verdict == "failed" || verdict == "merged" || verdict == "complete" ||
          verdict == "merge_failed" || verdict == "integration_failed") {
        const bool failed = verdict == "failed" || verdict == "integration_failed";
        const std::string base = str_field(plan, "base_branch");
        if (live) {
          view.show(render(false));
          view.finish();
        }
        cursor.reset();
        std::int64_t elapsed =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
        if (!opts.quiet) {
          if (verdict == "integration_failed") {
            ui << style.red("plan " + plan_id + " is blocked") << " after "
               << format_elapsed(elapsed) << ", " << format_cost(tree_cost(loops))
               << ": every loop passed, but " << str_field(plan, "status_reason") << "\n";
          } else if (failed) {
            std::string why;
            for (const auto& l : loops) {
              std::string s = str_field(l, "status");
              if (s == "failed" || s == "stopped") {
                why = str_field(l, "id") + " " + s;
                std::string reason = str_field(l, "status_reason");
                if (!reason.empty()) why += ": " + reason;
                break;
              }
            }
            ui << style.red("plan " + plan_id + " ended without completing") << " after "
               << format_elapsed(elapsed) << ", " << format_cost(tree_cost(loops))
               << (why.empty() ? "" : " (" + why + ")") << "\n";
          } else {
            ui << style.green("plan " + plan_id + " complete") << " in " << format_elapsed(elapsed)
               << ", " << format_cost(tree_cost(loops));
            if (verdict == "merged") {
              ui << "; merged into " << base << " at "
                 << str_field(plan, "merged_into_base").substr(0, 10);
            } else if (verdict == "merge_failed") {
              ui << "; " << style.red("not merged into " + base) << ": "
                 << str_field(plan, "merge_error") << " (resolve it, then `loopr merge " << plan_id
                 << "`)";
            } else {
              ui << "; `loopr merge " << plan_id << "` merges it into " << base;
            }
            ui << "\n";
          }
        }
        return failed || verdict == "merge_failed" ? kFailed : kOk;
      }
    }
    if (live) view.show(render(true));
    ++frame;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace loopr::cli
