// Host commands (core/host_command.hpp).
#include <cstdlib>

#include <loopr/core/config.hpp>
#include <loopr/core/host_command.hpp>

namespace loopr {
namespace {

namespace fs = std::filesystem;

// The words of a command line, quotes removed (a quoted `sh -c "…"` body is split too).
std::vector<std::string> words_of(std::string_view command) {
  std::vector<std::string> out;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) out.push_back(std::move(word));
    word.clear();
  };
  for (char c : command) {
    if (c == '\'' || c == '"' || c == '\\') continue;
    if (std::string_view(" \t\n;&|()<>`=").find(c) != std::string_view::npos)
      flush();
    else
      word += c;
  }
  flush();
  return out;
}

bool inside(const fs::path& path, const fs::path& root) {
  fs::path rel = path.lexically_normal().lexically_relative(root.lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

// Inside `repo` as written, or once its symlinks are resolved.
bool leads_into(const fs::path& path, const fs::path& repo) {
  if (inside(path, repo)) return true;
  std::error_code ec;
  fs::path real = fs::weakly_canonical(path, ec);
  fs::path real_repo = fs::weakly_canonical(repo, ec);
  return !ec && inside(real, real_repo);
}

}  // namespace

std::string repo_path_in_command(std::string_view command, const fs::path& repo,
                                 const fs::path& home) {
  for (const std::string& w : words_of(command)) {
    if (w.front() == '-' || w.find("://") != std::string::npos || w.front() == '$') continue;
    fs::path candidate;
    if (w.front() == '/')
      candidate = w;
    else if (w.rfind("~/", 0) == 0 && !home.empty())
      candidate = home / w.substr(2);
    else
      candidate = repo / w;
    std::error_code ec;
    const bool exists = fs::symlink_status(candidate, ec).type() != fs::file_type::not_found && !ec;
    if (w.front() != '/' && w.front() != '~' && !exists) continue;  // a program on PATH, a word
    if (leads_into(candidate, repo)) return w;
  }
  return {};
}

std::vector<std::string> host_command_problems(const Config& config, const fs::path& repo,
                                               const fs::path& home) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < config.notify.size(); ++i) {
    std::string file = repo_path_in_command(config.notify[i].command, repo, home);
    if (!file.empty())
      out.push_back("notify[" + std::to_string(i) + "].command runs " + file +
                    ", a file inside the repository the model can change (move the script out "
                    "of the repository, e.g. to ~/.config/loopr/, and name it by its full path)");
  }
  return out;
}

std::map<std::string, std::string> minimal_host_env() {
  std::map<std::string, std::string> env;
  for (const char* name :
       {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ",
        "TERM", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"})
    if (const char* v = std::getenv(name)) env[name] = v;
  if (!env.count("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  return env;
}

}  // namespace loopr
