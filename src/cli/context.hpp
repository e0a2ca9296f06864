// What every command gets: the global flags and the repository it runs in.
#pragma once

#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include <loopr/cli/app.hpp>
#include <loopr/core/config.hpp>
#include <loopr/core/repo_paths.hpp>

namespace loopr::cli {

struct GlobalOptions {
  std::string directory;  ///< -C DIR
  bool json = false;
  bool quiet = false;
};

/// Ctrl-C ended a command that was waiting or asking (the shell's convention, 128 + SIGINT).
inline constexpr int kInterrupted = 130;

/// Thrown by commands to end with a one-line error and an exit code.
struct CommandError {
  int exit_code;
  std::string what;  ///< what went wrong
  std::string hint;  ///< what to do
};

/// Where text for people goes: stdout, or stderr under `--json` (stdout holds the document).
std::ostream& ui_stream(const GlobalOptions& opts);

/// Prints `loopr: what (hint)` to stderr and returns the exit code.
int report(const CommandError& error);

/// The work tree root of the git repository containing `start` (walks up to a `.git`).
std::optional<std::filesystem::path> find_repo_root(const std::filesystem::path& start);

/// The folder the command runs in (-C or the current folder); CommandError if -C names none.
std::filesystem::path start_folder(const GlobalOptions& opts);

/// The repository the command runs in (-C or the current folder); CommandError if none.
std::filesystem::path require_repo(const GlobalOptions& opts);

/// Loads `.loopr/config.yml` of the repo; a bad file is a CommandError with exit 2.
Config require_config(const RepoPaths& paths);

/// `require_config`, and the file must exist (the daemon needs it): exit 2 with "run `loopr
/// init`" otherwise.
Config require_existing_config(const RepoPaths& paths);

}  // namespace loopr::cli
