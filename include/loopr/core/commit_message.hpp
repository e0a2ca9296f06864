// The messages of the commits loopr makes on a loop's behalf, `loopr(<loop id>): <what>`: built
// and read here only (`git log` shows whose work a commit is; the web page finds a loop's own).
// A model can write such a message itself: reading one says who it claims, never who made it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace loopr {

/// What every such message starts with (the one place it is written: tests/api/house_rules_test).
inline constexpr std::string_view kLoopCommitPrefix = "loopr(";

/// `loopr(<loop_id>): <what>`.
inline std::string loop_commit_message(std::string_view loop_id, std::string_view what) {
  std::string out;
  out.reserve(loop_id.size() + what.size() + 9);
  out.append(kLoopCommitPrefix).append(loop_id).append("): ").append(what);
  return out;
}

/// The loop id a message of that form names; nullopt for any other message.
inline std::optional<std::string_view> loop_commit_id(std::string_view message) {
  if (!message.starts_with(kLoopCommitPrefix)) return std::nullopt;
  std::string_view rest = message.substr(kLoopCommitPrefix.size());
  std::size_t close = rest.find("):");
  if (close == std::string_view::npos || close == 0) return std::nullopt;
  return rest.substr(0, close);
}

}  // namespace loopr
