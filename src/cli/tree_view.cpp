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

std::string submit_plan(const DaemonClient& api, const std::string& request,
                        const api::LimitsRequest& limits) {
  return submit_request(api, api::PlanRequest{request, /*dry_run=*/false, limits});
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

// Prints how the tree ended (`plan` is its plan's row) and returns the exit code.
int print_tree_end(std::ostream& ui, const Style& style, const std::vector<api::LoopRow>& loops,
                   const api::LoopRow& plan, std::int64_t elapsed, bool quiet) {
  const std::string& plan_id = plan.id;
  const TreeVerdict verdict = *plan.tree_verdict;
  const bool failed = verdict == TreeVerdict::failed || verdict == TreeVerdict::integration_failed;
  const int code = failed || verdict == TreeVerdict::merge_failed ? kFailed : kOk;
  if (quiet) return code;
  const std::string& base = plan.base_branch;
  const std::string spent = format_elapsed(elapsed) + ", " + format_cost(tree_cost_of(loops));
  if (verdict == TreeVerdict::integration_failed) {
    ui << style.red("plan " + plan_id + " is blocked") << " after " << spent
       << ": every loop passed, but " << shown(plan.status_reason) << "\n";
    return code;
  }
  if (failed && plan.end_reason == EndReason::baseline_failed) {
    ui << style.red("plan " + plan_id + " is blocked before any code loop") << ": "
       << shown(plan.status_reason) << "\n";
    return code;
  }
  if (failed) {
    std::string why;
    for (const auto& l : loops) {
      if (l.status != LoopStatus::failed && l.status != LoopStatus::stopped) continue;
      why = l.id + " " + to_string(l.status);
      if (!l.status_reason.empty()) why += ": " + shown(l.status_reason);
      break;
    }
    ui << style.red("plan " + plan_id + " ended without completing") << " after " << spent
       << (why.empty() ? "" : " (" + why + ")") << "\n";
    return code;
  }
  ui << style.green("plan " + plan_id + " complete") << " in " << spent;
  if (verdict == TreeVerdict::merged) {
    ui << "; merged into " << base << " at " << plan.merged_into_base.substr(0, 10);
  } else if (verdict == TreeVerdict::merge_failed) {
    ui << "; " << style.red("not merged into " + base) << ": " << shown(plan.merge_error)
       << " (resolve it, then `loopr merge " << plan_id << "`)";
  } else if (plan.pr && plan.pr->number > 0) {  // merge: pr
    ui << "; pull request #" << plan.pr->number << " " << shown(plan.pr->url)
       << (plan.pr->checks == PrChecks::passed ? " (checks pass)" : "");
  } else {
    ui << "; `loopr merge " << plan_id << "` merges it into " << base;
  }
  ui << "\n";
  return code;
}

// `submit --wait`: the tree drawn live (or its changes printed), the gate asked at each plan
// iteration that awaits approval, until the tree ends.
class PlanWait {
 public:
  PlanWait(const DaemonClient& api, const GlobalOptions& opts, std::string plan_id, bool yes)
      : api_(api),
        opts_(opts),
        plan_id_(std::move(plan_id)),
        yes_(yes),
        ui_(ui_stream(opts)),
        live_(!opts.json && !opts.quiet && is_terminal(STDOUT_FILENO)),
        print_changes_(!opts.json && !opts.quiet && !live_),
        style_{stdout_color(opts)},
        events_(api, "&loop=" + url_encode(plan_id_)),
        view_(std::cout) {
    if (live_) cursor_.emplace();
  }

  int run() {
    while (true) {
      if (g_interrupted.load()) {
        if (live_) view_.finish();
        throw CommandError{kInterrupted,
                           "stopped waiting for " + plan_id_ + "; its loops go on in the daemon",
                           "`loopr watch` shows them, `loopr stop " + plan_id_ + "` stops them"};
      }
      if (events_.take_changed() || Clock::now() - last_fetch_ > std::chrono::seconds(1)) {
        fetch();
        const Gate gate = ask_gate();
        if (gate == Gate::skipped) return kOk;
        if (gate == Gate::decided) {
          last_fetch_ = Clock::time_point{};  // look again before drawing
          continue;
        }
        // The daemon says where the tree stands (the plan row's `tree_verdict`).
        const api::LoopRow* plan = nullptr;
        for (const auto& l : loops_)
          if (l.id == plan_id_) plan = &l;
        if (plan && plan->tree_verdict && ended(*plan->tree_verdict)) {
          show_still();
          cursor_.reset();
          return print_tree_end(ui_, style_, loops_, *plan, elapsed_ms(), opts_.quiet);
        }
      }
      if (live_) view_.show(lines(true));
      ++frame_;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

 private:
  enum class Gate { none, decided, skipped };

  std::int64_t elapsed_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_).count();
  }

  std::vector<std::string> lines(bool spinner) const {
    std::vector<std::string> out;
    std::string head = style_.bold("plan " + plan_id_) + "  " + format_elapsed(elapsed_ms()) +
                       "  " + format_cost(tree_cost_of(loops_));
    if (daemon_gone_) head += "  " + style_.red("daemon not reachable, retrying…");
    out.push_back(head);
    std::string table =
        render_tree_table(loops_, style_, now_ms(), [&](const api::LoopRow& l) -> std::string {
          if (!spinner) return "";
          return l.status == LoopStatus::running ? std::string(kSpinner[frame_ % 10]) + " " : "  ";
        });
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    for (auto& line : question_lines(loops_, style_)) out.push_back(std::move(line));
    return out;
  }

  // The tree as the daemon has it now (kept as it was while the daemon restarts).
  void fetch() {
    last_fetch_ = Clock::now();
    try {
      loops_ = tree_of(api_, plan_id_);
      daemon_gone_ = false;
    } catch (const CommandError& e) {
      if (e.exit_code != kDaemonUnreachable) throw;
      daemon_gone_ = true;  // a restart: keep waiting, the tree resumes with the daemon
    }
    std::string sig = tree_signature(loops_);
    if (print_changes_ && sig != last_signature_) {
      for (const auto& l : lines(false)) std::cout << l << "\n";
      std::cout << std::flush;
    }
    last_signature_ = sig;
  }

  // The live view left as it is, for what is printed below it.
  void show_still() {
    if (!live_) return;
    view_.show(lines(false));
    view_.finish();
  }

  // The gate, once per plan iteration (the list may still show the plan waiting right after a
  // decision): --yes approves, else the person is asked.
  Gate ask_gate() {
    for (const auto& l : loops_) {
      if (l.id != plan_id_ || l.status != LoopStatus::awaiting_approval) continue;
      if (l.iteration <= decided_at_) continue;
      decided_at_ = l.iteration;
      show_still();
      if (yes_) {
        if (!opts_.quiet) ui_ << render_baseline(l, style_);
        act_on(api_, plan_id_, "approve");
        if (!opts_.quiet) ui_ << "approved " << plan_id_ << " (--yes)\n";
        return Gate::decided;
      }
      cursor_.reset();
      Prompter prompter(STDIN_FILENO, ui_);
      ReviewDecision d = review_plan(api_, l, prompter, ui_, style_);
      if (d.decision == Choice::skip) {
        if (!opts_.quiet)
          ui_ << "stopped waiting: " << plan_id_ << " awaits approval; `loopr review " << plan_id_
              << "` decides, `loopr watch` follows\n";
        return Gate::skipped;
      }
      if (live_) cursor_.emplace();
      return Gate::decided;
    }
    return Gate::none;
  }

  const DaemonClient& api_;
  const GlobalOptions& opts_;
  const std::string plan_id_;
  const bool yes_;
  std::ostream& ui_;
  const bool live_;
  const bool print_changes_;
  Style style_;
  EventWatcher events_;
  LiveView view_;
  std::optional<HiddenCursor> cursor_;
  const Clock::time_point started_ = Clock::now();
  Clock::time_point last_fetch_{};
  std::string last_signature_;
  std::vector<api::LoopRow> loops_;
  int frame_ = 0;
  bool daemon_gone_ = false;
  int decided_at_ = 0;  ///< the plan iteration the gate was last answered for
};

}  // namespace

int wait_for_plan(const DaemonClient& api, const GlobalOptions& opts, const std::string& plan_id,
                  bool yes) {
  install_interrupt_handlers();
  return PlanWait(api, opts, plan_id, yes).run();
}

}  // namespace loopr::cli
