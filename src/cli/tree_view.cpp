#include "cli/tree_view.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <sstream>

#include <loopr/core/ids.hpp>
#include <loopr/core/text.hpp>

#include "cli/baseline_view.hpp"
#include "cli/coordination.hpp"
#include "cli/format.hpp"
#include "cli/review.hpp"
#include "cli/terminal.hpp"
#include "cli/terminal_guard.hpp"
#include "cli/wire.hpp"

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
  // The cursor movement and line clearing are loopr's own: they go around the terminal filter
  // (terminal_guard.hpp), which shows any such sequence inside the lines visibly.
  if (shown_ > 0) write_terminal_control(out_, "\x1b[" + std::to_string(shown_) + "F");
  int count = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i + 1 == max_lines && lines.size() > max_lines) {
      out_ << "… " << std::to_string(lines.size() - i) << " more";
      write_terminal_control(out_, "\x1b[K\n");
      ++count;
      break;
    }
    out_ << truncate_visible(lines[i], width);
    write_terminal_control(out_, "\x1b[K\n");
    ++count;
  }
  write_terminal_control(out_, "\x1b[J");
  out_ << std::flush;
  shown_ = count;
}

EventWatcher::EventWatcher(const DaemonClient& api, std::string query)
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
          if (auto e = event_of(m)) last_seq = std::max(last_seq, e->seq);
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

std::string submit_plan(const DaemonClient& api, const std::string& request, const json& fields) {
  return submit_request(api, request, /*dry_run=*/false, fields);
}

namespace {

std::vector<api::LoopRow> tree_of(const DaemonClient& api, const std::string& plan_id) {
  std::vector<api::LoopRow> mine;
  for (auto& l : list_loops(api, "?plan=" + url_encode(plan_id)))
    if (root_plan_id(l.id) == plan_id) mine.push_back(std::move(l));
  return mine;
}

// What a change worth printing again looks like (not the ages and spinner that move anyway).
std::string tree_signature(const std::vector<api::LoopRow>& loops) {
  std::string s;
  for (const auto& l : loops)
    s += l.id + ":" + to_string(l.status) + ":" + std::to_string(l.iteration) + ";";
  return s;
}

// Where the tree ended, or nullopt while it goes on (or waits for the person).
bool ended(TreeVerdict v) {
  switch (v) {
    case TreeVerdict::failed:
    case TreeVerdict::merged:
    case TreeVerdict::complete:
    case TreeVerdict::merge_failed:
    case TreeVerdict::integration_failed:
      return true;
    default:
      return false;
  }
}

}  // namespace

int wait_for_plan(const DaemonClient& api, const GlobalOptions& opts, const std::string& plan_id,
                  bool yes) {
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
  std::vector<api::LoopRow> loops;
  int frame = 0;
  bool daemon_gone = false;
  int decided_at = 0;  // the plan iteration the gate was last answered for

  auto render = [&](bool spinner) {
    std::vector<std::string> lines;
    std::int64_t elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
    std::string head = style.bold("plan " + plan_id) + "  " + format_elapsed(elapsed) + "  " +
                       format_cost(tree_cost_of(loops));
    if (daemon_gone) head += "  " + style.red("daemon not reachable, retrying…");
    lines.push_back(head);
    std::string table =
        render_tree_table(loops, style, now_ms(), [&](const api::LoopRow& l) -> std::string {
          if (!spinner) return "";
          return l.status == LoopStatus::running ? std::string(kSpinner[frame % 10]) + " " : "  ";
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
        if (l.id != plan_id || l.status != LoopStatus::awaiting_approval) continue;
        if (l.iteration <= decided_at) continue;
        decided_at = l.iteration;
        if (live) {
          view.show(render(false));
          view.finish();
        }
        if (yes) {
          if (!opts.quiet) ui << render_baseline(l, style);
          act_on(api, plan_id, "approve");
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
      const api::LoopRow* plan = nullptr;
      for (const auto& l : loops)
        if (l.id == plan_id) plan = &l;
      if (plan && plan->tree_verdict && ended(*plan->tree_verdict)) {
        const TreeVerdict verdict = *plan->tree_verdict;
        const bool failed =
            verdict == TreeVerdict::failed || verdict == TreeVerdict::integration_failed;
        const std::string base = plan->base_branch;
        if (live) {
          view.show(render(false));
          view.finish();
        }
        cursor.reset();
        std::int64_t elapsed =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
        if (!opts.quiet) {
          if (verdict == TreeVerdict::integration_failed) {
            ui << style.red("plan " + plan_id + " is blocked") << " after "
               << format_elapsed(elapsed) << ", " << format_cost(tree_cost_of(loops))
               << ": every loop passed, but " << shown(plan->status_reason) << "\n";
          } else if (failed && plan->end_reason == EndReason::baseline_failed) {
            ui << style.red("plan " + plan_id + " is blocked before any code loop") << ": "
               << shown(plan->status_reason) << "\n";
          } else if (failed) {
            std::string why;
            for (const auto& l : loops) {
              if (l.status == LoopStatus::failed || l.status == LoopStatus::stopped) {
                why = l.id + " " + to_string(l.status);
                if (!l.status_reason.empty()) why += ": " + shown(l.status_reason);
                break;
              }
            }
            ui << style.red("plan " + plan_id + " ended without completing") << " after "
               << format_elapsed(elapsed) << ", " << format_cost(tree_cost_of(loops))
               << (why.empty() ? "" : " (" + why + ")") << "\n";
          } else {
            ui << style.green("plan " + plan_id + " complete") << " in " << format_elapsed(elapsed)
               << ", " << format_cost(tree_cost_of(loops));
            if (verdict == TreeVerdict::merged) {
              ui << "; merged into " << base << " at " << plan->merged_into_base.substr(0, 10);
            } else if (verdict == TreeVerdict::merge_failed) {
              ui << "; " << style.red("not merged into " + base) << ": " << shown(plan->merge_error)
                 << " (resolve it, then `loopr merge " << plan_id << "`)";
            } else if (plan->pr && plan->pr->number > 0) {  // merge: pr
              ui << "; pull request #" << plan->pr->number << " " << shown(plan->pr->url)
                 << (plan->pr->checks == "passed" ? " (checks pass)" : "");
            } else {
              ui << "; `loopr merge " << plan_id << "` merges it into " << base;
            }
            ui << "\n";
          }
        }
        return failed || verdict == TreeVerdict::merge_failed ? kFailed : kOk;
      }
    }
    if (live) view.show(render(true));
    ++frame;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace loopr::cli
