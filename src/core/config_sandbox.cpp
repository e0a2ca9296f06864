// What confines a loop's commands and changes: `sandbox:` (bubblewrap's settings, the paths it
// shows or hides, the environment), `setup:` (the commands a worktree runs first) and `protect:`
// (the paths a loop may not change on its own).
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include <loopr/core/config.hpp>
#include <loopr/core/protected_paths.hpp>
#include <loopr/core/secret_paths.hpp>

#include "core/config_sections.hpp"

namespace loopr {

std::vector<std::string> SandboxConfig::checkout_paths() const {
  std::vector<std::string> out;
  for (const auto& p : read_only)
    if (!p.empty() && p[0] != '/' && p[0] != '~') out.push_back(p);
  return out;
}

namespace config_detail {

namespace {

bool is_variable_name(const std::string& name) {
  bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char ch : name) valid = valid && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  return valid;
}

// `sandbox.env`: a list of `NAME` (the daemon's value) or `NAME=value` entries, or a mapping of
// NAME to a value (null: the daemon's value).
void read_env(const Walker& w, const YAML::Node& n, const std::string& key, SandboxConfig& s) {
  s.env.clear();
  s.env_values.clear();
  auto add = [&](const YAML::Node& at, std::string name, std::optional<std::string> value) {
    if (!is_variable_name(name)) w.fail(at, key, "\"" + name + "\" is not a variable name");
    if (value)
      s.env_values[name] = *value;
    else
      s.env.push_back(name);
  };
  if (n.IsMap()) {
    for (const auto& kv : n) {
      std::optional<std::string> value;
      if (!kv.second.IsNull()) value = w.scalar(kv.second, key, "a value (a string)");
      add(kv.first, kv.first.as<std::string>(), value);
    }
    return;
  }
  std::vector<std::string> entries = w.strings(n, key);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto eq = entries[i].find('=');
    if (eq == std::string::npos)
      add(n[i], entries[i], std::nullopt);
    else
      add(n[i], entries[i].substr(0, eq), entries[i].substr(eq + 1));
  }
}

// Why a relative `sandbox.read_only` entry cannot be a path of the checkout; empty when it can.
std::string checkout_path_problem(const std::string& p) {
  if (p.empty() || p == ".") return "is empty (name a path of your checkout, e.g. node_modules)";
  std::string first = p.substr(0, p.find('/'));
  std::size_t at = 0;
  while (at <= p.size()) {
    std::size_t slash = p.find('/', at);
    std::string part = p.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
    if (part == ".." || part.empty())
      return "must stay inside your checkout (no `..` or empty parts), or be absolute";
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  if (first == ".git" || first == ".loopr") return "is loopr's or git's own folder";
  return {};
}

// An absolute `sandbox.read_only` entry that would show a secret, against $HOME as written and
// as resolved (a home reached through a link).
std::string read_only_secret_problem(const std::string& p) {
  const char* home = std::getenv("HOME");
  std::filesystem::path h = home && *home ? std::filesystem::path(home) : std::filesystem::path();
  std::string why = secret_path_problem(p, h);
  std::error_code ec;
  if (why.empty() && !h.empty())
    why = secret_path_problem(p, std::filesystem::weakly_canonical(h, ec));
  return why;
}

// `protect.<list>`: path patterns (core/protected_paths.hpp); `..` and empty ones would match
// nothing a loop can change.
std::vector<std::string> read_path_patterns(const Walker& w, const YAML::Node& v,
                                            const std::string& k) {
  std::vector<std::string> out = w.strings(v, k);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::string& p = out[i];
    std::string path = p.substr(0, p.find('#'));
    bool up = path == ".." || path.rfind("../", 0) == 0 || path.find("/../") != std::string::npos;
    if (path.empty() || path.find_first_not_of('/') == std::string::npos || up)
      w.fail(v[i], k,
             "\"" + p +
                 "\" is not a path pattern inside the repository (write e.g. tests/run.sh, "
                 "conftest.py, .vscode/ or package.json#scripts.test)");
  }
  return out;
}

}  // namespace

// `setup:` a list of commands, or {commands, network, timeout}.
void read_setup(const Walker& w, const YAML::Node& v, const std::string& k, SetupConfig& s) {
  if (v.IsNull()) return;
  if (v.IsSequence()) {
    s.commands = w.strings(v, k);
  } else {
    w.map(v, k,
          {
              {"commands", [&](const YAML::Node& n,
                               const std::string& key) { s.commands = w.strings(n, key); }},
              {"network",
               [&](const YAML::Node& n, const std::string& key) { s.network = w.boolean(n, key); }},
              {"timeout",
               [&](const YAML::Node& n, const std::string& key) {
                 s.timeout = w.duration(n, key);
                 if (s.timeout < std::chrono::seconds(1)) w.fail(n, key, "must be at least 1s");
               }},
          });
  }
  for (const auto& c : s.commands)
    if (c.find_first_not_of(" \t\r\n") == std::string::npos)
      w.fail(v, k, "a setup command is empty");
}

// `sandbox: none` (the explicit opt-out) or a mapping of settings.
void read_sandbox(const Walker& w, const YAML::Node& v, const std::string& k, SandboxConfig& s) {
  if (v.IsScalar()) {
    s.mode = w.choice(v, k, {"bubblewrap", "none"});
    return;
  }
  auto size = [&w](std::uint64_t& field, std::uint64_t min) -> Walker::Handler {
    return [&w, &field, min](const YAML::Node& n, const std::string& key) {
      std::string text = w.scalar(n, key, "a size such as 512M or 1G");
      auto parsed = parse_size(text);
      if (!parsed) w.fail(n, key, "bad size \"" + text + "\" (write e.g. 4096, 512K, 64M or 1G)");
      if (*parsed < min) w.fail(n, key, "must be at least " + format_size(min) + ", got " + text);
      field = *parsed;
    };
  };
  auto count = [&w](std::uint64_t& field, long long min) -> Walker::Handler {
    return [&w, &field, min](const YAML::Node& n, const std::string& key) {
      field = static_cast<std::uint64_t>(w.integer(n, key, min, 1'000'000'000));
    };
  };
  w.map(v, k,
        {
            {"mode",
             [&](const YAML::Node& n, const std::string& key) {
               s.mode = w.choice(n, key, {"bubblewrap", "none"});
             }},
            {"network",
             [&](const YAML::Node& n, const std::string& key) { s.network = w.strings(n, key); }},
            {"env", [&](const YAML::Node& n, const std::string& key) { read_env(w, n, key, s); }},
            {"read_only",
             [&](const YAML::Node& n, const std::string& key) { s.read_only = w.strings(n, key); }},
            {"hide",
             [&](const YAML::Node& n, const std::string& key) { s.hide = w.strings(n, key); }},
            {"limits",
             [&](const YAML::Node& n, const std::string& key) {
               SandboxLimits& l = s.limits;
               w.map(n, key,
                     {
                         {"processes", count(l.processes, 16)},
                         {"open_files", count(l.open_files, 64)},
                         {"file_size", size(l.file_size, 1 << 20)},
                         {"memory", size(l.memory, 64 << 20)},
                         {"tmp_size", size(l.tmp_size, 1 << 20)},
                     });
             }},
        });
  for (auto& p : s.read_only) {
    // Absolute: never a home or a secret location (secret_paths.hpp), however it is written.
    if (!p.empty() && (p[0] == '/' || p.starts_with("~/") || p == "~")) {
      if (std::string why = read_only_secret_problem(p); !why.empty())
        w.fail(v["read_only"], k + ".read_only", "\"" + p + "\" " + why);
      continue;
    }
    // Relative: the checkout's own path (node_modules, .venv), shown in every worktree too.
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    if (std::string why = checkout_path_problem(p); !why.empty())
      w.fail(v["read_only"], k + ".read_only", "\"" + p + "\" " + why);
  }
  for (const auto& p : s.hide)
    if (p.empty() || (p[0] != '/' && !p.starts_with("~/") && p != "~"))
      w.fail(v["hide"], k + ".hide", "\"" + p + "\" must be an absolute path (or start with ~/)");
}

// `protect:` the path patterns a loop may not change, and the size limits of its changes
void read_protect(const Fields& f, const YAML::Node& v, const std::string& k, Config& c) {
  const Walker& w = f.w;
  w.map(
      v, k,
      {
          {"harness",
           [&](const YAML::Node& v2, const std::string& k2) {
             c.protect.harness = read_path_patterns(w, v2, k2);
           }},
          {"tests",
           [&](const YAML::Node& v2, const std::string& k2) {
             c.protect.tests = read_path_patterns(w, v2, k2);
           }},
          {"hold", [&](const YAML::Node& v2,
                       const std::string& k2) { c.protect.hold = read_path_patterns(w, v2, k2); }},
          {"max_file_size", f.byte_size(c.protect.max_file_size, 1024)},
          {"max_tree_size", f.byte_size(c.protect.max_tree_size, 1024)},
      });
}

}  // namespace config_detail
}  // namespace loopr
