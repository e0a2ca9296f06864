// Iteration folders (`.loopr/logs/<loop>/<n>/`, core/iteration_files.hpp) for the tests of
// their readers, the CLI's `show --iteration` and the web page alike: one with every file the
// engine writes, and a hostile one.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include <loopr/core/iteration_files.hpp>
#include <loopr/core/repo_paths.hpp>

#include "support/temp_dir.hpp"

namespace loopr::testing {

/// Every file of iteration `n` of `loop`, each holding "marker of <its name>".
inline void write_every_iteration_file(const RepoPaths& paths, const std::string& loop, int n) {
  for (const auto& spec : kIterationFiles) {
    const std::string marker = std::string("marker of ") + spec.name;
    write_iteration_file(paths, loop, n, spec.file,
                         spec.file == IterationFile::conversation
                             ? nlohmann::json{{"role", "user"}, {"content", marker}}.dump() + "\n"
                             : marker + "\n");
  }
}

/// The secret a hostile folder points at (`<root>/secret.txt`).
inline constexpr const char* kIterationSecret = "SECRET-KEY-do-not-show";

/// Iteration 1 of `code-001-001-001` as a hostile model's run could leave it: prompt.md and
/// review.md symlinked to a secret, validation.log a FIFO, a transcript with fields of the wrong
/// types, a terminal escape, markup, bytes that are not UTF-8 and `filler` more bytes after them.
inline void write_hostile_iteration(const std::filesystem::path& root, std::size_t filler) {
  RepoPaths paths(root);
  write_file(root / "secret.txt", kIterationSecret);
  const auto d = paths.iteration_dir("code-001-001-001", 1);
  std::filesystem::create_directories(d);
  std::filesystem::create_symlink(root / "secret.txt", d / "prompt.md");
  std::filesystem::create_symlink(root / "secret.txt", d / "review.md");
  if (::mkfifo((d / "validation.log").c_str(), 0600) != 0)
    throw std::runtime_error("mkfifo failed");
  write_file(
      d / "conversation.jsonl",
      R"({"role":"assistant","content":[{"type":"text","text":7},{"type":"tool_use","name":{}},)"
      R"({"type":"tool_result","is_error":"yes"},{"type":"thinking","thinking":"\u001b]52;c;x\u0007"},)"
      R"({"type":"text","text":"</pre><script>x()</script>"}]})"
      "\n"
      R"({"role":42})"
      "\nbad \xff\xfe \x1b[2J <b>\n" +
          std::string(filler, 'x'));
}

}  // namespace loopr::testing
