#include "cli/context.hpp"

#include <cstdlib>

#include <loopr/core/host_command.hpp>
#include <loopr/core/text.hpp>

namespace loopr::cli {

std::ostream& ui_stream(const GlobalOptions& opts) { return opts.json ? std::cerr : std::cout; }

int report(const CommandError& error) {
  // An error may quote the model's text (a loop's reason, the daemon's answer).
  std::cerr << "loopr: " << terminal_text(error.what);
  if (!error.hint.empty()) std::cerr << " (" << terminal_text(error.hint) << ")";
  std::cerr << "\n";
  return error.exit_code;
}

std::optional<std::filesystem::path> find_repo_root(const std::filesystem::path& start) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(start, ec);
  if (ec) return std::nullopt;
  dir = dir.lexically_normal();
  while (true) {
    if (std::filesystem::exists(dir / ".git", ec)) return dir;
    if (!dir.has_parent_path() || dir.parent_path() == dir) return std::nullopt;
    dir = dir.parent_path();
  }
}

std::filesystem::path start_folder(const GlobalOptions& opts) {
  std::filesystem::path start = opts.directory.empty() ? std::filesystem::current_path()
                                                       : std::filesystem::path(opts.directory);
  std::error_code ec;
  if (!opts.directory.empty() && !std::filesystem::is_directory(start, ec))
    throw CommandError{kUsage, "no such folder: " + opts.directory, "check the path given to -C"};
  return start;
}

std::filesystem::path require_repo(const GlobalOptions& opts) {
  const std::filesystem::path start = start_folder(opts);
  auto root = find_repo_root(start);
  if (!root)
    throw CommandError{kUsage,
                       "not inside a git repository: " + std::filesystem::absolute(start).string(),
                       "run loopr inside a git repository, or pass -C DIR"};
  return *root;
}

Config require_config(const RepoPaths& paths) {
  auto config = load_config(paths.config_file().string());
  if (!config)
    throw CommandError{kUsage, config.error().message,
                       "fix the file; `loopr init` shows every key with its default"};
  // What the host runs never comes from the repository (docs/security.md S4.1).
  const char* home = std::getenv("HOME");
  auto host = host_command_problems(*config, paths.root, home ? home : "");
  if (!host.empty())
    throw CommandError{kUsage, paths.config_file().string() + ": " + host.front(),
                       "a command loopr runs outside the sandbox must not be a file the model "
                       "can change"};
  return std::move(config).value();
}

Config require_existing_config(const RepoPaths& paths) {
  std::error_code ec;
  if (!std::filesystem::exists(paths.config_file(), ec))
    throw CommandError{kUsage,
                       "loopr is not set up in " + paths.root.string() + " (no .loopr/config.yml)",
                       "run `loopr init` there first"};
  return require_config(paths);
}

}  // namespace loopr::cli
