// The user gate in the terminal (`loopr review`, and `submit --wait` when a plan is ready): shows
// a plan awaiting approval as rendered markdown and asks `[a]pprove [r]eject [i]terate [s]kip`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <loopr/api/views.hpp>

#include "cli/daemon_client.hpp"
#include "cli/prompter.hpp"
#include "cli/terminal.hpp"

namespace loopr::cli {

/// What a person chose at a gate (a plan's approval, a loop's question).
enum class Choice { skip, approve, reject, iterate, answer };
/// Its word in `loopr review --json` ("skip", "approve", …).
const char* to_string(Choice choice);

/// What the person decided about one plan (or, `answer`, one question).
struct ReviewDecision {
  std::string id;
  Choice decision = Choice::skip;
  std::string text;           ///< the reason or the feedback
  bool end_of_input = false;  ///< input ended (Ctrl-D, end of a pipe) before a decision
};

/// The text of a plan loop's artifact (API fields `worktree` and `artifacts`), through the one
/// reader (git/artifact.hpp): its worktree's file when it is a regular file reached without a
/// symlink, else as committed on its branches; at most 1 MiB, made valid UTF-8. CommandError
/// (exit 1) if none has it.
std::string read_plan_artifact(const RepoPaths& paths, const api::LoopRow& loop);

/// Shows one plan, asks, and tells the daemon. Text goes to `ui`.
ReviewDecision review_plan(const DaemonClient& api, const api::LoopRow& loop, Prompter& prompter,
                           std::ostream& ui, const Style& style);

/// The plans awaiting approval (`only_id`: just that one; exit 4 if unknown, 5 if it does not
/// wait for approval), one after another until all are decided or input ends.
std::vector<ReviewDecision> review_pending(const DaemonClient& api, const GlobalOptions& opts,
                                           const std::string& only_id, Prompter& prompter);

}  // namespace loopr::cli
