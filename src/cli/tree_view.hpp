// Live views of the loop tree: `loopr watch` and `loopr submit --wait` (the tree, a spinner,
// iteration n/max, cost, elapsed), redrawn in place on a terminal and printed on change
// otherwise. Events from `GET /v1/events` say when to look again; `GET /v1/loops` says what is.
#pragma once

#include <atomic>
#include <iosfwd>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include <loopr/api/requests.hpp>

#include "cli/daemon_client.hpp"

namespace loopr::cli {

/// Redraws a block of lines in place (cursor up + clear) on a terminal.
class LiveView {
 public:
  explicit LiveView(std::ostream& out) : out_(out) {}
  /// Replaces the block on screen with `lines` (cut to the terminal's width and height).
  void show(const std::vector<std::string>& lines);
  /// Leaves the last block on screen; the next `show` starts a new block below it.
  void finish() { shown_ = 0; }

 private:
  std::ostream& out_;
  int shown_ = 0;
};

/// Follows `GET /v1/events` on a thread and raises a flag per event; reconnects (resuming
/// after the last seq seen) when the daemon restarts. Stops with the object.
class EventWatcher {
 public:
  /// `query` is appended to `/v1/events?since=N` (e.g. `&loop=001`).
  EventWatcher(const DaemonClient& api, std::string query);
  ~EventWatcher();
  EventWatcher(const EventWatcher&) = delete;
  EventWatcher& operator=(const EventWatcher&) = delete;

  /// True (once) if an event arrived since the last call.
  bool take_changed() { return changed_.exchange(false); }
  /// True while connected.
  bool connected() const { return connected_.load(); }

 private:
  const DaemonClient& api_;
  std::string query_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> changed_{false};
  std::atomic<bool> connected_{false};
  std::thread thread_;
  void run();
};

/// Waits for the tree of `plan_id` to end (the plan row's `tree_verdict` says when), showing it
/// live (unless quiet/json). At the gate it approves (`yes`) or asks like `loopr review`
/// (stdin). Exit code: 0 complete (and merged with `merge: auto`), 1 failed, stopped or not
/// mergeable; 0 when the person skips the gate or input ends there (the plan stays waiting);
/// CommandError{kInterrupted} on Ctrl-C.
int wait_for_plan(const DaemonClient& api, const GlobalOptions& opts, const std::string& plan_id,
                  bool yes);

/// POSTs the request (with its own limits), returns the new plan's id.
std::string submit_plan(const DaemonClient& api, const std::string& request,
                        const api::LimitsRequest& limits = {});

}  // namespace loopr::cli
