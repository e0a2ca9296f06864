// `loopr show ID --iteration N`: what the model saw and did in one iteration, read from the
// transcript files `.loopr/logs/loops/<id>/iterations/NNN/` (core/iteration_files.hpp: prompt.md,
// conversation.jsonl, validation.log, review.md) — no daemon needed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <loopr/core/iteration_files.hpp>

#include "cli/terminal.hpp"

namespace loopr::cli {

struct IterationLog {
  IterationRead files;                        ///< each file, missing ones without text
  std::vector<TranscriptEntry> conversation;  ///< conversation.jsonl, one entry per line
};

/// Reads the files of `paths.iteration_dir(id, n)` through the one reader (a line of the
/// conversation that is not JSON is kept as its text).
IterationLog read_iteration_log(const RepoPaths& paths, const std::string& id, int n);

/// `{"id","iteration","prompt","conversation":[…],"validation_log","review"}` (null for a missing
/// file), and `"truncated":[file names]` when a file was longer than the reader reads.
nlohmann::json iteration_log_json(const IterationLog& log);

/// The prompt, each message (text, tool calls and results, model-call receipts), the validation
/// log, the review.
std::string render_iteration_log(const IterationLog& log, const Style& style);

}  // namespace loopr::cli
