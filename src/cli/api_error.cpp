// The control API's error answers as CommandErrors with INTERFACE.md's exit codes (no
// transport here, so the mapping is unit-tested without a socket).
#include <cctype>

#include <loopr/api/answers.hpp>

#include "cli/daemon_client.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {

// Where the "(what to do)" part of "what went wrong (what to do)" starts, or npos.
std::size_t find_hint_start(const std::string& msg) {
  if (msg.empty() || msg.back() != ')') return std::string::npos;
  int depth = 0;
  for (std::size_t i = msg.size(); i-- > 0;) {
    if (msg[i] == ')') ++depth;
    if (msg[i] == '(' && --depth == 0) return i >= 1 && msg[i - 1] == ' ' ? i : std::string::npos;
  }
  return std::string::npos;
}

}  // namespace

CommandError api_error(int status, const json& body) {
  std::string msg = api::error_from_json(body).error;
  if (msg.empty()) msg = "the daemon answered HTTP " + std::to_string(status);
  std::string what = msg, hint;
  if (auto p = find_hint_start(msg); p != std::string::npos) {
    what = msg.substr(0, p - 1);
    hint = msg.substr(p + 1, msg.size() - p - 2);
  }
  int code = kFailed;
  switch (status) {
    case 400:
      code = kUsage;
      break;
    case 404:
      code = kUnknownId;
      break;
    case 409:
      code = kWrongState;
      break;
    case 503:
      code = kDaemonUnreachable;
      break;
    default:
      break;
  }
  if (hint.empty()) {
    if (code == kUnknownId)
      hint = "`loopr list --all` shows every loop";
    else if (code == kWrongState)
      hint = "`loopr show ID` shows its status";
    else if (code == kDaemonUnreachable)
      hint = "start it again with `loopr daemon`";
    else
      hint = "see .loopr/logs/daemon.out";
  }
  return CommandError{code, what, hint};
}

CommandError daemon_not_running(const RepoPaths& paths) {
  return CommandError{kDaemonUnreachable, "no loopr daemon is running for " + paths.root.string(),
                      "start it with `loopr daemon`"};
}

}  // namespace loopr::cli
