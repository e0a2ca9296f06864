// Provider keys kept out of the daemon's environment: read once at start, then overwritten in
// the process's initial environment block (what /proc/<pid>/environ shows, even after
// unsetenv) and removed, so no child and no process that can read /proc of the daemon finds them.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>

namespace loopr::exec {

/// The variables that hold provider credentials.
inline constexpr const char* kSecretVariables[] = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY",
                                                   "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY",
                                                   "GOOGLE_API_KEY"};

class SecretEnv {
 public:
  /// Takes `names` out of this process's environment (values kept here).
  static SecretEnv take(const std::vector<std::string>& names);

  std::optional<std::string> get(const std::string& name) const;
  /// A lookup that answers the taken names from here and the rest from the environment.
  EnvLookup lookup() const;

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace loopr::exec
