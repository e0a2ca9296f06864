// The commands, one function each; `app.cpp` wires them to CLI11. Each returns its exit code
// or throws CommandError (INTERFACE.md's exit codes).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/context.hpp"

namespace loopr::cli {

class Session;  // cli/command.hpp: what a command's run gets

/// `validation`: `--validation CMD`; none: the test command is found from the repository.
/// `dry_run`: only print the candidates, the choice and the provisioning; write nothing.
int run_init(Session& s, const std::string& base, const std::optional<std::string>& validation,
             bool dry_run = false);
/// `loopr doctor`: 0 when every check passes, 1 when one fails. `offline`: no network request;
/// `skip_tests`: the setup and tests are not run in a fresh worktree of the base
/// branch (doctor_tests.hpp).
int run_doctor(const GlobalOptions& opts, bool offline, bool skip_tests);
int run_config(Session& s);
int run_validate(const GlobalOptions& opts, const std::string& kind, const std::string& file);

/// `force`: start even if the provider's prerequisites look unmet.
int run_daemon_command(Session& s, bool foreground, bool force);
int run_daemon_status(Session& s);
/// `drain`: the iterations in flight finish first, for at most `timeout` (a duration; empty: 30m).
int run_daemon_stop(Session& s, bool drain = false, const std::string& timeout = {});

/// `submit --max-cost USD --max-runtime D --max-iterations N`: the request's own limits, kept
/// with its plan for the whole tree in place of the config's (0 / empty: the config's).
struct SubmitLimits {
  double max_cost = 0;
  std::string max_runtime;
  int max_iterations = 0;
};

/// `force`: skip the prerequisite checks that can be wrong (src/cli/preflight.hpp).
/// `submit --dry-run`: the plan loop up to the gate, shown, then ended (`failed`, `dry run`).
int run_dry_run(Session& s, const std::string& request, bool force,
                const SubmitLimits& limits = {});
int run_submit(Session& s, const std::string& request, bool wait, bool yes, bool force,
               const SubmitLimits& limits = {});
/// `loopr list`'s filters, passed to `GET /v1/loops` as they are (the daemon checks them).
struct ListFilter {
  std::string status;  ///< comma-separated statuses
  std::string type;
  std::string plan;
};
int run_list(Session& s, bool all, const ListFilter& filter = {});
int run_show(Session& s, const std::string& id, std::optional<int> iteration);
int run_review(Session& s, const std::string& id);
int run_merge(Session& s, const std::string& plan_id, bool force);
/// `loopr answer ID TEXT`: answers a loop's question (cli/coordination.cpp).
int run_answer(Session& s, const std::string& id, const std::string& text);
int run_logs(Session& s, const std::string& id, bool follow);
int run_watch(Session& s);
/// `loopr sandbox-bridge SOCKET PORT -- COMMAND…` (hidden; cli/sandbox_bridge.cpp).
int run_sandbox_bridge(const std::string& socket_path, int port,
                       const std::vector<std::string>& command);
/// `loopr web`: the daemon's web UI on 127.0.0.1 (`port` 0: a free one), its address printed;
/// `open`: in the person's browser; `stop`: ends it (cli/web_command.cpp).
int run_web(Session& s, int port, bool open, bool stop);
/// `loopr stats [--since D]`: spending per plan and in total (cli/stats_command.cpp).
int run_stats(Session& s, const std::string& since);
/// `loopr gc [--dry-run] [--older-than D]` (cli/gc_command.cpp); 1 when something could not be
/// removed (the rest was).
/// `caches`: also clear the repository's build caches (exec/build_caches.hpp).
int run_gc(Session& s, bool dry_run, const std::string& older_than, bool caches = false);

}  // namespace loopr::cli
