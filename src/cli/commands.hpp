// The commands, one function each; `app.cpp` wires them to CLI11. Each returns its exit code
// or throws CommandError (INTERFACE.md's exit codes).
#pragma once

#include <optional>
#include <set>
#include <string>

#include "cli/context.hpp"

namespace loopr::cli {

int run_init(const GlobalOptions& opts, const std::string& base);
int run_config(const GlobalOptions& opts);
int run_validate(const GlobalOptions& opts, const std::string& kind, const std::string& file);

int run_daemon_command(const GlobalOptions& opts, bool foreground);
int run_daemon_status(const GlobalOptions& opts);
int run_daemon_stop(const GlobalOptions& opts);

int run_submit(const GlobalOptions& opts, const std::string& request, bool wait, bool yes);
int run_list(const GlobalOptions& opts, bool all);
int run_show(const GlobalOptions& opts, const std::string& id, std::optional<int> iteration);
int run_review(const GlobalOptions& opts, const std::string& id);
/// approve | reject (text: the reason, may be empty) | iterate (text: the feedback).
int run_gate(const GlobalOptions& opts, const std::string& action, const std::string& id,
             const std::string& text);
/// pause | resume | stop: the loop and all its descendants.
int run_control(const GlobalOptions& opts, const std::string& action, const std::string& id);
int run_merge(const GlobalOptions& opts, const std::string& plan_id);
int run_logs(const GlobalOptions& opts, const std::string& id, bool follow);
int run_watch(const GlobalOptions& opts);

}  // namespace loopr::cli
