// A loop's files as the daemon serves them (src/daemon/API.md): an artifact, a file as the
// loop's branches hold it, the loop's diff, and an iteration's files. Each is read by its one
// reader (daemon/loop_files.hpp); what is read is model-written: shown, never interpreted. One
// codec each way, keeping the JSON as API.md has it; reading never throws.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace loopr::api {

/// One file of a loop as read: its text (valid UTF-8, cut at the reader's limit) or why there is
/// none.
struct FileView {
  std::string path;
  std::optional<std::string> text;  ///< nullopt: not readable (`problem` says why)
  std::string problem;
  bool truncated = false;  ///< longer than the limit: `text` holds its first bytes
  std::string source;      ///< where it was read: a branch, or "" for the loop's worktree
};

/// A loop's diff: its `label` (`git diff FROM...BRANCH`) and its text (`diff.path`: the branch).
struct DiffView {
  std::string label;
  FileView diff;
};

/// One file of an iteration's folder (core/iteration_files.hpp names them).
struct IterationFileView {
  std::string name;  ///< prompt.md, conversation.jsonl, validation.log, review.md
  std::optional<std::string> text;
  bool truncated = false;
  std::string problem;
};

/// Iteration `n` of loop `id`: every file of its folder, in kIterationFiles' order.
struct IterationView {
  std::string id;
  int n = 0;
  std::vector<IterationFileView> files;
};

nlohmann::json to_json(const FileView& f);
FileView file_view_from_json(const nlohmann::json& j);
nlohmann::json to_json(const DiffView& d);
DiffView diff_view_from_json(const nlohmann::json& j);
nlohmann::json to_json(const IterationView& it);
IterationView iteration_view_from_json(const nlohmann::json& j);

}  // namespace loopr::api
