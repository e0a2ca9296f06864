// Environment lookups for a test (what ExecutorOptions::env and the config readers take): only
// the variables the test names, never the test process's own.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace loopr::testing {

/// Holds exactly `vars`.
inline std::function<std::optional<std::string>(const char*)> fake_env(
    std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

/// PATH (the system's folders) and HOME = `home`, nothing else: what a sandboxed command of a
/// test runs with.
inline std::function<std::optional<std::string>(const char*)> path_and_home_env(std::string home) {
  return [home = std::move(home)](const char* name) -> std::optional<std::string> {
    if (std::string(name) == "PATH") return "/usr/local/bin:/usr/bin:/bin";
    if (std::string(name) == "HOME") return home;
    return std::nullopt;
  };
}

}  // namespace loopr::testing
