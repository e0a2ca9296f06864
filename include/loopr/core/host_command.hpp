// What the host runs (docs/security.md B4): the commands loopr runs outside the sandbox (the
// `notify` commands) are the person's, so they never come from a path inside the repository
// (the model can change every file there, and a tree can bring the change to the checkout),
// and they run with a minimal environment, never the daemon's (no provider keys, no tokens).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loopr {

struct Config;

/// The first word of `command` (a shell command line) that names a file inside `repo`: an
/// absolute path there, a `~/` path that leads there, or a relative path that exists there
/// (the commands once ran in the checkout); also through symlinks. "" when none does.
std::string repo_path_in_command(std::string_view command, const std::filesystem::path& repo,
                                 const std::filesystem::path& home = {});

/// One line per host command of `config` that runs a file inside `repo`, naming its key:
/// `notify[0].command runs tools/notify.sh, a file inside the repository the model can change`.
std::vector<std::string> host_command_problems(const Config& config,
                                               const std::filesystem::path& repo,
                                               const std::filesystem::path& home = {});

/// The variables a host command gets from the daemon's environment (`getenv`): what a desktop
/// notification or a shell needs (PATH, HOME, USER, LOGNAME, LANG, LC_*, TZ, TERM, DISPLAY,
/// WAYLAND_DISPLAY, XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS) and nothing else.
std::map<std::string, std::string> minimal_host_env();

}  // namespace loopr
