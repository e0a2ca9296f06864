// `loopr show ID --iteration N`: what the model saw and did in one iteration, read from the
// transcript files `.loopr/logs/loops/<id>/iterations/NNN/` (prompt.md, conversation.jsonl,
// validation.log) — no daemon needed.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/repo_paths.hpp>

#include "cli/terminal.hpp"

namespace loopr::cli {

struct IterationLog {
  std::string id;
  int n = 0;
  std::filesystem::path dir;
  std::optional<std::string> prompt;          ///< prompt.md
  std::vector<nlohmann::json> conversation;   ///< conversation.jsonl, one object per line
  std::optional<std::string> validation_log;  ///< validation.log
  std::optional<std::string> review;          ///< review.md (loops.review), when reviewed
};

/// Reads the three files of `paths.iteration_dir(id, n)` (missing ones stay empty; a line that is
/// not JSON is kept as a string).
IterationLog read_iteration_log(const RepoPaths& paths, const std::string& id, int n);

/// `{"id","iteration","prompt","conversation":[…],"validation_log","review"}` (null for a missing file).
nlohmann::json iteration_log_json(const IterationLog& log);

/// The prompt, each message (text, tool calls and results, model-call receipts), the validation
/// log.
std::string render_iteration_log(const IterationLog& log, const Style& style);

}  // namespace loopr::cli
