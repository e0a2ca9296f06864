// An iteration's files (`.loopr/logs/loops/<id>/iterations/NNN/`), named in this one place: the
// engine writes them, `loopr show --iteration` and the web page read them through the one reader
// here and parse `conversation.jsonl` with the one parser here. Everything in them is the model's
// or its commands' text: read never through a symlink, capped, made valid UTF-8.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/repo_paths.hpp>

namespace loopr {

/// The files of an iteration's folder.
enum class IterationFile { prompt, conversation, validation, review };

struct IterationFileSpec {
  IterationFile file;
  const char* name;  ///< the file's name in the folder
  bool always;       ///< written by every iteration that ran (review.md: only when a reviewer ran)
};

/// Every file the engine writes, in the order readers show them.
inline constexpr std::array<IterationFileSpec, 4> kIterationFiles{{
    {IterationFile::prompt, "prompt.md", true},                 // the system block and the prompt
    {IterationFile::conversation, "conversation.jsonl", true},  // messages, then receipts
    {IterationFile::validation, "validation.log", true},        // what the check printed
    {IterationFile::review, "review.md", false},                // the reviewer's exchange
}};

/// The file's name in the folder (`prompt.md` …).
const char* file_name(IterationFile file);

/// What the web page shows of a file (a page of a browser).
inline constexpr std::size_t kIterationFilePageBytes = 1 << 20;
/// What `loopr show --iteration` reads of a file (one model context's conversation fits).
inline constexpr std::size_t kIterationFileReadBytes = 16 << 20;

/// One file of an iteration as read.
struct IterationFileText {
  std::optional<std::string> text;  ///< valid UTF-8; nullopt: missing or not a regular file
  bool truncated = false;           ///< longer than the limit: `text` holds its first bytes
  std::string problem;              ///< why there is no text: `(no prompt.md)` …
};

/// Iteration `n`'s files as read.
struct IterationRead {
  std::string loop_id;
  int n = 0;
  std::filesystem::path dir;
  std::array<IterationFileText, kIterationFiles.size()> files;

  const IterationFileText& operator[](IterationFile f) const {
    return files[static_cast<std::size_t>(f)];
  }
  IterationFileText& operator[](IterationFile f) { return files[static_cast<std::size_t>(f)]; }
};

/// Reads every file of `paths.iteration_dir(id, n)`, each up to `max_bytes`, none through a
/// symlink (the folder's own name neither), none that is not a regular file (a FIFO never
/// blocks). A loop id that is not one name reads nothing.
IterationRead read_iteration_files(const RepoPaths& paths, const std::string& loop_id, int n,
                                   std::size_t max_bytes);

/// Writes (or replaces) one file of the iteration's folder, never through what is at its name
/// (a symlink or FIFO there is replaced). Failures are logged, not fatal: a full disk must not
/// fail a loop whose real work is in git and the store.
void write_iteration_file(const RepoPaths& paths, const std::string& loop_id, int n,
                          IterationFile file, std::string_view content);

/// One content block of a message in `conversation.jsonl`. A block whose fields do not have the
/// types the engine writes is `other`: shown as its JSON, never an error.
struct TranscriptBlock {
  enum class Kind { text, thinking, redacted_thinking, tool_use, tool_result, other };
  Kind kind = Kind::other;
  std::string text;        ///< text, thinking
  std::string name;        ///< tool_use: the tool ("?" when unnamed)
  nlohmann::json input;    ///< tool_use: its arguments ({} when none)
  nlohmann::json content;  ///< tool_result: as written (a string or blocks)
  bool is_error = false;   ///< tool_result
  nlohmann::json raw;      ///< the block as written
};

/// One line of `conversation.jsonl`.
struct TranscriptEntry {
  enum class Kind { message, receipt, raw };
  Kind kind = Kind::raw;
  std::string line;                     ///< the line as written
  nlohmann::json value;                 ///< the line as JSON; a line that is not JSON: its text
  std::string role;                     ///< message
  std::optional<std::string> text;      ///< message whose content is one string
  std::vector<TranscriptBlock> blocks;  ///< message whose content is blocks
  nlohmann::json receipt;               ///< receipt: a model call's usage and stop reason
};

/// Every non-empty line of a `conversation.jsonl`, typed.
std::vector<TranscriptEntry> parse_conversation(std::string_view jsonl);

/// A tool result's content as text: a string as it is, blocks one a line (a text block's text,
/// any other as its JSON dumped with `indent`).
std::string tool_result_text(const nlohmann::json& content, int indent);

}  // namespace loopr
