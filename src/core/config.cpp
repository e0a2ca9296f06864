// Config loading. The YAML is walked against a table of known keys, so an unknown key, a wrong
// type or a bad value is reported as `FILE:LINE: key.path: what is wrong (what to write)`.
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <loopr/core/config.hpp>
#include <loopr/core/protected_paths.hpp>
#include <loopr/core/secret_paths.hpp>

#include "core/config_walker.hpp"

namespace loopr {

std::map<LoopType, LoopTypeConfig> Config::default_loops() {
  LoopTypeConfig doc;  // plan, spec, phase: format check
  LoopTypeConfig code;
  code.max_iterations = 20;
  code.validation = "make test";
  return {{LoopType::plan, doc}, {LoopType::spec, doc}, {LoopType::phase, doc}, {LoopType::code, code}};
}

std::map<std::string, Price> Config::default_pricing() {
  return {
      {"claude-opus-5-5", {4.0, 20.0, 5.0, 0.20}},
      {"claude-sonnet-5-5", {2.0, 10.0, 2.5, 0.20}},
      {"claude-haiku-5-5", {0.10, 0.50, 0.125, 0.01}},
  };
}

namespace {

// A loop role's setting: its type's `field` (review: `review_value`; the integration fix loop:
// `fix_value`, then the code loops'), else `fallback` (the llm.* one).
std::string role_choice(const Config& c, std::string_view role, std::string LoopTypeConfig::*field,
                        const std::string& review_value, const std::string& fix_value,
                        const std::string& fallback) {
  auto of_type = [&](LoopType t) {
    auto it = c.loops.find(t);
    return it == c.loops.end() ? std::string() : it->second.*field;
  };
  std::string v;
  if (role == "review")
    v = review_value;
  else if (role == "integration-fix")
    v = !fix_value.empty() ? fix_value : of_type(LoopType::code);
  else if (auto t = parse_loop_type(role))
    v = of_type(*t);
  return v.empty() ? fallback : v;
}

}  // namespace

std::string Config::model_for(std::string_view role) const {
  std::string chosen =
      role_choice(*this, role, &LoopTypeConfig::model, review.model, integration.model, "");
  if (!chosen.empty()) return chosen;
  const std::string provider = provider_for(role);
  if (provider == "codex") return cli_model(llm.codex.model, llm.model);
  if (provider == "gemini") return cli_model(llm.gemini.model, llm.model);
  return llm.model;
}

std::string cli_model(const std::string& own, const std::string& llm_model) {
  if (!own.empty()) return own;
  return llm_model.rfind("claude", 0) == 0 ? std::string() : llm_model;
}

std::string Config::provider_for(std::string_view role) const {
  return role_choice(*this, role, &LoopTypeConfig::provider, review.provider, integration.provider,
                     llm.provider);
}

namespace {

// The providers `llm.provider` and `loops.<type>.provider` may name.
const std::vector<std::string> kProviders = {"anthropic",   "openai", "openai-responses",
                                             "claude-code", "codex",  "gemini"};

using config_detail::ConfigError;
using config_detail::same_executor;
using config_detail::Walker;

using H = Walker::Handler;

// `loops.<type>.tools`: known names, no repeats, and only a narrowing of what the type has.
std::vector<std::string> read_tools(const Walker& w, const YAML::Node& v, const std::string& k, LoopType type) {
  std::vector<std::string> out = w.strings(v, k);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::string& name = out[i];
    bool known = false;
    std::string list;
    for (const char* t : kToolNames) {
      known = known || name == t;
      list += (list.empty() ? "" : ", ") + std::string(t);
    }
    const YAML::Node item = v[i];
    if (!known) w.fail(item, k, "unknown tool \"" + name + "\" (the tools are " + list + ")");
    if (!seen.insert(name).second) w.fail(item, k, "\"" + name + "\" is listed twice");
    if (name == "share_note" && type == LoopType::plan)
      w.fail(item, k, "share_note is not available to plan loops (a plan has no siblings; its artifact is what its children read)");
    if (name == "run_command" && type != LoopType::code)
      w.fail(item, k, std::string("run_command is not available to ") + to_string(type) +
                          " loops (they only write their markdown artifact; only code loops run commands)");
  }
  return out;
}

void read_loop_type(const Walker& w, const YAML::Node& node, const std::string& path, LoopTypeConfig& c,
                    LoopType type) {
  w.map(node, path,
        {
            {"tools", [&](const YAML::Node& v, const std::string& k) { c.tools = read_tools(w, v, k, type); }},
            {"max_iterations", [&](const YAML::Node& v, const std::string& k) { c.max_iterations = static_cast<int>(w.integer(v, k, 1, 10000)); }},
            {"validation", [&](const YAML::Node& v, const std::string& k) {
               // Plan, spec and phase loops are checked by the built-in format check: a command
               // here would be accepted and never run.
               if (type != LoopType::code)
                 w.fail(v, k, std::string("a ") + to_string(type) + " loop is checked by the built-in format check "
                              "(and the judge, llm.judge); only loops.code.validation runs a command");
               c.validation = w.str(v, k);
             }},
            {"iteration_timeout", [&](const YAML::Node& v, const std::string& k) { c.iteration_timeout = w.duration(v, k); }},
            {"max_turns_per_iteration", [&](const YAML::Node& v, const std::string& k) { c.max_turns_per_iteration = static_cast<int>(w.integer(v, k, 1, 10000)); }},
            {"iteration_max_runtime", [&](const YAML::Node& v, const std::string& k) {
               // `none` (or 0, or nothing): no limit, the default.
               const bool none = v.IsNull() || (v.IsScalar() && v.Scalar() == "none");
               c.iteration_max_runtime = none ? Duration::zero() : w.duration(v, k);
             }},
            {"model", [&](const YAML::Node& v, const std::string& k) { c.model = w.str(v, k); }},
            {"provider", [&](const YAML::Node& v, const std::string& k) { c.provider = w.choice(v, k, kProviders); }},
        });
}

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
  if (why.empty() && !h.empty()) why = secret_path_problem(p, std::filesystem::weakly_canonical(h, ec));
  return why;
}

// `setup:` a list of commands, or {commands, network, timeout}.
void read_setup(const Walker& w, const YAML::Node& v, const std::string& k, SetupConfig& s) {
  if (v.IsNull()) return;
  if (v.IsSequence()) {
    s.commands = w.strings(v, k);
  } else {
    w.map(v, k,
          {
              {"commands", [&](const YAML::Node& n, const std::string& key) { s.commands = w.strings(n, key); }},
              {"network", [&](const YAML::Node& n, const std::string& key) { s.network = w.boolean(n, key); }},
              {"timeout", [&](const YAML::Node& n, const std::string& key) {
                 s.timeout = w.duration(n, key);
                 if (s.timeout < std::chrono::seconds(1)) w.fail(n, key, "must be at least 1s");
               }},
          });
  }
  for (const auto& c : s.commands)
    if (c.find_first_not_of(" \t\r\n") == std::string::npos) w.fail(v, k, "a setup command is empty");
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
            {"mode", [&](const YAML::Node& n, const std::string& key) { s.mode = w.choice(n, key, {"bubblewrap", "none"}); }},
            {"network", [&](const YAML::Node& n, const std::string& key) { s.network = w.strings(n, key); }},
            {"env", [&](const YAML::Node& n, const std::string& key) { read_env(w, n, key, s); }},
            {"read_only", [&](const YAML::Node& n, const std::string& key) { s.read_only = w.strings(n, key); }},
            {"hide", [&](const YAML::Node& n, const std::string& key) { s.hide = w.strings(n, key); }},
            {"limits", [&](const YAML::Node& n, const std::string& key) {
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

// `notify:` a list of {command, events, timeout}.
void read_notify(const Walker& w, const YAML::Node& v, const std::string& k, std::vector<NotifyCommand>& out) {
  out.clear();
  if (v.IsNull()) return;
  if (!v.IsSequence()) w.fail(v, k, "expected a list of {command, events, timeout} entries");
  for (std::size_t i = 0; i < v.size(); ++i) {
    NotifyCommand n;
    const std::string key = k + "[" + std::to_string(i) + "]";
    w.map(v[i], key,
          {
              {"command", [&](const YAML::Node& n2, const std::string& k2) { n.command = w.str(n2, k2); }},
              {"events", [&](const YAML::Node& n2, const std::string& k2) {
                 n.events = w.strings(n2, k2);
                 for (std::size_t j = 0; j < n.events.size(); ++j) {
                   bool known = false;
                   std::string list;
                   for (const char* e : kNotifyEvents) {
                     known = known || n.events[j] == e;
                     list += (list.empty() ? "" : ", ") + std::string(e);
                   }
                   if (!known) w.fail(n2[j], k2, "unknown event \"" + n.events[j] + "\" (the events are " + list + ")");
                 }
               }},
              {"timeout", [&](const YAML::Node& n2, const std::string& k2) { n.timeout = w.duration(n2, k2); }},
          });
    if (n.command.empty()) w.fail(v[i], key, "needs a `command` (the shell command to run)");
    out.push_back(std::move(n));
  }
}

// `protect.<list>`: path patterns (core/protected_paths.hpp); `..` and empty ones would match
// nothing a loop can change.
std::vector<std::string> read_path_patterns(const Walker& w, const YAML::Node& v, const std::string& k) {
  std::vector<std::string> out = w.strings(v, k);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::string& p = out[i];
    std::string path = p.substr(0, p.find('#'));
    bool up = path == ".." || path.rfind("../", 0) == 0 || path.find("/../") != std::string::npos;
    if (path.empty() || path.find_first_not_of('/') == std::string::npos || up)
      w.fail(v[i], k, "\"" + p + "\" is not a path pattern inside the repository (write e.g. tests/run.sh, conftest.py, .vscode/ or package.json#scripts.test)");
  }
  return out;
}

// `loops.review`: the reviewer of a code loop that passed its validation.
void read_review(const Walker& w, const YAML::Node& v, const std::string& k, ReviewConfig& r) {
  w.map(v, k,
        {
            {"enabled", [&](const YAML::Node& n, const std::string& key) { r.enabled = w.boolean(n, key); }},
            {"model", [&](const YAML::Node& n, const std::string& key) { r.model = w.str(n, key); }},
            {"provider", [&](const YAML::Node& n, const std::string& key) { r.provider = w.choice(n, key, kProviders); }},
            {"max_rounds", [&](const YAML::Node& n, const std::string& key) { r.max_rounds = static_cast<int>(w.integer(n, key, 1, 100)); }},
            {"max_attempts", [&](const YAML::Node& n, const std::string& key) { r.max_attempts = static_cast<int>(w.integer(n, key, 1, 20)); }},
        });
}

// `forge:` (merge: pr). A gitlab forge whose api_url / token_env are not given takes GitLab's.
void read_forge(const Walker& w, const YAML::Node& v, const std::string& k, ForgeConfig& f) {
  bool api_given = false, token_given = false;
  auto text = [&w](std::string& field, bool* given) -> H {
    return [&w, &field, given](const YAML::Node& n, const std::string& key) {
      field = w.str(n, key);
      if (given) *given = true;
    };
  };
  w.map(v, k,
        {
            {"kind", [&](const YAML::Node& n, const std::string& key) { f.kind = w.choice(n, key, {"github", "gitlab"}); }},
            {"api_url", text(f.api_url, &api_given)},
            {"repo", text(f.repo, nullptr)},
            {"remote", text(f.remote, nullptr)},
            {"token_env", text(f.token_env, &token_given)},
            {"ci", [&](const YAML::Node& n, const std::string& key) {
               w.map(n, key,
                     {
                         {"wait", [&](const YAML::Node& m, const std::string& k2) { f.ci.wait = w.boolean(m, k2); }},
                         {"timeout", [&](const YAML::Node& m, const std::string& k2) { f.ci.timeout = w.duration(m, k2); }},
                         {"fix_iterations", [&](const YAML::Node& m, const std::string& k2) { f.ci.fix_iterations = static_cast<int>(w.integer(m, k2, 0, 1000)); }},
                         {"poll_max", [&](const YAML::Node& m, const std::string& k2) { f.ci.poll_max = w.duration(m, k2); }},
                     });
             }},
        });
  if (f.kind == "gitlab" && !api_given) f.api_url = "https://gitlab.com/api/v4";
  if (f.kind == "gitlab" && !token_given) f.token_env = "GITLAB_TOKEN";
  if (f.ci.poll_max.count() <= 0) f.ci.poll_max = std::chrono::seconds(1);
}

void read_config(const Walker& w, const YAML::Node& root, Config& c) {
  auto int_field = [&w](int& field, long long min, long long max) -> H {
    return [&w, &field, min, max](const YAML::Node& v, const std::string& k) { field = static_cast<int>(w.integer(v, k, min, max)); };
  };
  auto str_field = [&w](std::string& field) -> H {
    return [&w, &field](const YAML::Node& v, const std::string& k) { field = w.str(v, k); };
  };
  auto dur_field = [&w](Duration& field) -> H {
    return [&w, &field](const YAML::Node& v, const std::string& k) { field = w.duration(v, k); };
  };
  auto bool_field = [&w](bool& field) -> H {
    return [&w, &field](const YAML::Node& v, const std::string& k) { field = w.boolean(v, k); };
  };
  auto size_field = [&w](std::size_t& field, long long min, long long max) -> H {
    return [&w, &field, min, max](const YAML::Node& v, const std::string& k) { field = static_cast<std::size_t>(w.integer(v, k, min, max)); };
  };
  auto byte_size = [&w](std::uint64_t& field, std::uint64_t min) -> H {
    return [&w, &field, min](const YAML::Node& v, const std::string& k) {
      std::string text = w.scalar(v, k, "a size such as 50M or 1G");
      auto parsed = parse_size(text);
      if (!parsed) w.fail(v, k, "bad size \"" + text + "\" (write e.g. 4096, 512K, 64M or 1G)");
      if (*parsed < min) w.fail(v, k, "must be at least " + format_size(min) + ", got " + text);
      field = *parsed;
    };
  };
  auto named_ints = [&w](std::map<std::string, int>& field, long long min) -> H {
    return [&w, &field, min](const YAML::Node& v, const std::string& k) {
      std::map<std::string, H> hs;
      for (auto& [name, value] : field) {
        int* slot = &value;
        hs[name] = [&w, slot, min](const YAML::Node& v2, const std::string& k2) { *slot = static_cast<int>(w.integer(v2, k2, min, 1'000'000)); };
      }
      w.map(v, k, hs);
    };
  };

  LlmConfig& llm = c.llm;
  w.map(root, "",
        {
            {"base_branch", str_field(c.base_branch)},
            {"merge", [&](const YAML::Node& v, const std::string& k) {
               std::string m = w.choice(v, k, {"auto", "manual", "pr"});
               c.merge = m == "manual" ? MergeMode::manual : m == "pr" ? MergeMode::pr : MergeMode::automatic;
             }},
            {"attended", bool_field(c.attended)},
            {"baseline", [&](const YAML::Node& v, const std::string& k) {
               std::string m = w.choice(v, k, {"block", "warn", "off"});
               c.baseline = m == "warn" ? BaselineMode::warn : m == "off" ? BaselineMode::off : BaselineMode::block;
             }},
            {"on_failure", [&](const YAML::Node& v, const std::string& k) { c.on_failure = w.choice(v, k, {"finish_siblings", "stop_siblings"}) == "stop_siblings" ? FailurePolicy::stop_siblings : FailurePolicy::finish_siblings; }},
            {"llm", [&](const YAML::Node& v, const std::string& k) {
               w.map(v, k,
                     {
                         {"provider", [&](const YAML::Node& v2, const std::string& k2) { llm.provider = w.choice(v2, k2, {"anthropic", "openai", "openai-responses", "claude-code", "codex", "gemini"}); }},
                         {"model", str_field(llm.model)},
                         {"max_tokens", int_field(llm.max_tokens, 1, 10'000'000)},
                         {"api_version", str_field(llm.api_version)},
                         {"judge", bool_field(llm.judge)},
                         {"base_url", str_field(llm.base_url)},
                         {"auth_header", [&](const YAML::Node& v2, const std::string& k2) { llm.auth_header = w.choice(v2, k2, {"bearer", "x-api-key"}); }},
                         {"ca_file", str_field(llm.ca_file)},
                         {"stream", bool_field(llm.stream)},
                         {"max_tokens_field", [&](const YAML::Node& v2, const std::string& k2) { llm.max_tokens_field = w.choice(v2, k2, {"max_completion_tokens", "max_tokens"}); }},
                         {"connect_timeout", dur_field(llm.connect_timeout)},
                         {"first_byte_timeout", dur_field(llm.first_byte_timeout)},
                         {"idle_timeout", dur_field(llm.idle_timeout)},
                         {"max_retries", int_field(llm.max_retries, 0, 100)},
                         {"cache", [&](const YAML::Node& v2, const std::string& k2) { llm.cache = w.choice(v2, k2, {"auto", "off"}) == "auto"; }},
                         {"cache_ttl", [&](const YAML::Node& v2, const std::string& k2) { llm.cache_ttl_1h = w.choice(v2, k2, {"5m", "1h"}) == "1h"; }},
                         {"claude_code", [&](const YAML::Node& v2, const std::string& k2) {
                            ClaudeCodeConfig& cc = llm.claude_code;
                            w.map(v2, k2,
                                  {
                                      {"command", str_field(cc.command)},
                                      {"permission_mode", [&](const YAML::Node& v3, const std::string& k3) { cc.permission_mode = w.choice(v3, k3, {"manual", "default", "acceptEdits", "auto", "bypassPermissions", "dontAsk", "plan"}); }},
                                      {"skip_permissions", bool_field(cc.skip_permissions)},
                                      {"max_turns", int_field(cc.max_turns, 1, 10000)},
                                      {"allowed_hosts", [&](const YAML::Node& v3, const std::string& k3) { cc.allowed_hosts = w.strings(v3, k3); }},
                                  });
                          }},
                         {"codex", [&](const YAML::Node& v2, const std::string& k2) {
                            CodexConfig& cx = llm.codex;
                            w.map(v2, k2,
                                  {
                                      {"command", str_field(cx.command)},
                                      {"model", str_field(cx.model)},
                                      {"reasoning_effort", [&](const YAML::Node& v3, const std::string& k3) { cx.reasoning_effort = w.choice(v3, k3, {"minimal", "low", "medium", "high", "xhigh"}); }},
                                      {"allowed_hosts", [&](const YAML::Node& v3, const std::string& k3) { cx.allowed_hosts = w.strings(v3, k3); }},
                                  });
                          }},
                         {"gemini", [&](const YAML::Node& v2, const std::string& k2) {
                            GeminiConfig& gm = llm.gemini;
                            w.map(v2, k2,
                                  {
                                      {"command", str_field(gm.command)},
                                      {"model", str_field(gm.model)},
                                      {"allowed_hosts", [&](const YAML::Node& v3, const std::string& k3) { gm.allowed_hosts = w.strings(v3, k3); }},
                                  });
                          }},
                     });
             }},
            {"concurrency", [&](const YAML::Node& v, const std::string& k) {
               ConcurrencyConfig& cc = c.concurrency;
               w.map(v, k,
                     {
                         {"max_loops", int_field(cc.max_loops, 1, 1'000'000)},
                         {"llm_slots", int_field(cc.llm_slots, 1, 10'000)},
                         {"requests_per_minute", int_field(cc.requests_per_minute, 1, 1'000'000)},
                         {"runners", named_ints(cc.runners, 1)},
                         {"priority", named_ints(cc.priority, 0)},
                         {"runner_patterns", [&](const YAML::Node& v2, const std::string& k2) {
                            std::map<std::string, H> hs;
                            for (auto& [name, value] : cc.runner_patterns) {
                              auto* slot = &value;
                              hs[name] = [&w, slot](const YAML::Node& v3, const std::string& k3) { *slot = w.patterns(v3, k3); };
                            }
                            w.map(v2, k2, hs);
                          }},
                     });
             }},
            {"limits", [&](const YAML::Node& v, const std::string& k) {
               LimitsConfig& l = c.limits;
               w.map(v, k,
                     {
                         {"max_cost_usd", [&](const YAML::Node& v2, const std::string& k2) { l.max_cost_usd = w.number(v2, k2, 0); }},
                         {"max_loop_cost_usd", [&](const YAML::Node& v2, const std::string& k2) { l.max_loop_cost_usd = w.number(v2, k2, 0); }},
                         {"max_runtime", dur_field(l.max_runtime)},
                         {"circuit_breaker", int_field(l.circuit_breaker, 1, 10000)},
                         {"no_progress_iterations", int_field(l.no_progress_iterations, 1, 10000)},
                         {"max_same_failures", int_field(l.max_same_failures, 0, 10000)},
                         {"stop_on_patterns", [&](const YAML::Node& v2, const std::string& k2) { l.stop_on_patterns = w.patterns(v2, k2); }},
                         {"stop_scripts", [&](const YAML::Node& v2, const std::string& k2) { l.stop_scripts = w.strings(v2, k2); }},
                         {"cooldown", dur_field(l.cooldown)},
                         {"completion_signal", [&](const YAML::Node& v2, const std::string& k2) {
                            l.completion_signal = v2.IsNull() ? std::string() : w.pattern(v2, k2);
                          }},
                         {"feedback_bytes", size_field(l.feedback_bytes, 256, 10'000'000)},
                         {"notes_bytes", size_field(l.notes_bytes, 0, 10'000'000)},
                         {"min_free_space", [&](const YAML::Node& v2, const std::string& k2) {
                            std::string text = w.scalar(v2, k2, "a size such as 256M or 1G");
                            auto parsed = parse_size(text);
                            if (!parsed) w.fail(v2, k2, "bad size \"" + text + "\" (write e.g. 0, 256M or 1G)");
                            l.min_free_space = *parsed;
                          }},
                         {"at_cost_limit", [&](const YAML::Node& v2, const std::string& k2) { l.pause_at_limit = w.choice(v2, k2, {"pause", "fail"}) == "pause"; }},
                         {"max_input_tokens", [&](const YAML::Node& v2, const std::string& k2) { l.max_input_tokens = w.integer(v2, k2, 0, 1'000'000'000'000LL); }},
                         {"count_subscription_cost", [&](const YAML::Node& v2, const std::string& k2) { l.count_subscription_cost = w.boolean(v2, k2); }},
                         {"notify_cost_fraction", [&](const YAML::Node& v2, const std::string& k2) {
                            l.notify_cost_fraction = w.number(v2, k2, 0);
                            if (l.notify_cost_fraction > 1) w.fail(v2, k2, "must be a fraction between 0 and 1");
                          }},
                     });
             }},
            {"loops", [&](const YAML::Node& v, const std::string& k) {
               std::map<std::string, H> hs;
               for (LoopType t : kAllLoopTypes) {
                 LoopTypeConfig* slot = &c.loops[t];
                 hs[to_string(t)] = [&w, slot, t](const YAML::Node& v2, const std::string& k2) { read_loop_type(w, v2, k2, *slot, t); };
               }
               hs["review"] = [&w, &c](const YAML::Node& v2, const std::string& k2) { read_review(w, v2, k2, c.review); };
               w.map(v, k, hs);
             }},
            {"pricing", [&](const YAML::Node& v, const std::string& k) {
               if (v.IsNull()) return;
               if (!v.IsMap()) w.fail(v, k, "expected a mapping of model name to prices");
               for (const auto& kv : v) {
                 std::string model = kv.first.as<std::string>();
                 Price p = c.pricing.count(model) ? c.pricing[model] : Price{};
                 auto price = [&w](double& field) -> H {
                   return [&w, &field](const YAML::Node& v3, const std::string& k3) { field = w.number(v3, k3, 0); };
                 };
                 w.map(kv.second, k + "." + model,
                       {{"input", price(p.input)}, {"output", price(p.output)}, {"cache_write", price(p.cache_write)}, {"cache_read", price(p.cache_read)}});
                 c.pricing[model] = p;
               }
             }},
            {"artifacts", [&](const YAML::Node& v, const std::string& k) {
               w.map(v, k,
                     {
                         {"max_items", int_field(c.artifacts.max_items, 1, 1000)},
                         {"max_bytes", size_field(c.artifacts.max_bytes, 1024, 1'000'000'000)},
                     });
             }},
            {"sandbox", [&](const YAML::Node& v, const std::string& k) { read_sandbox(w, v, k, c.sandbox); }},
            {"setup", [&](const YAML::Node& v, const std::string& k) { read_setup(w, v, k, c.setup); }},
            {"executor", [&](const YAML::Node& v, const std::string& k) { config_detail::read_executor(w, v, k, c.executor); }},
            {"notify", [&](const YAML::Node& v, const std::string& k) { read_notify(w, v, k, c.notify); }},
            {"protect", [&](const YAML::Node& v, const std::string& k) {
               w.map(v, k,
                     {
                         {"harness", [&](const YAML::Node& v2, const std::string& k2) { c.protect.harness = read_path_patterns(w, v2, k2); }},
                         {"tests", [&](const YAML::Node& v2, const std::string& k2) { c.protect.tests = read_path_patterns(w, v2, k2); }},
                         {"hold", [&](const YAML::Node& v2, const std::string& k2) { c.protect.hold = read_path_patterns(w, v2, k2); }},
                         {"max_file_size", byte_size(c.protect.max_file_size, 1024)},
                         {"max_tree_size", byte_size(c.protect.max_tree_size, 1024)},
                     });
             }},
            {"integration", [&](const YAML::Node& v, const std::string& k) {
               w.map(v, k, {{"max_fix_iterations", int_field(c.integration.max_fix_iterations, 1, 1000)},
                           {"model", str_field(c.integration.model)},
                           {"provider", [&](const YAML::Node& v2, const std::string& k2) { c.integration.provider = w.choice(v2, k2, kProviders); }}});
             }},
            {"forge", [&](const YAML::Node& v, const std::string& k) { read_forge(w, v, k, c.forge); }},
            {"daemon", [&](const YAML::Node& v, const std::string& k) {
               w.map(v, k, {{"sigterm_drain", dur_field(c.daemon.sigterm_drain)}});
             }},
            {"gc", [&](const YAML::Node& v, const std::string& k) {
               w.map(v, k,
                     {
                         {"older_than", dur_field(c.gc.older_than)},
                         {"keep_archived", dur_field(c.gc.keep_archived)},
                         {"every", dur_field(c.gc.every)},
                     });
             }},
            {"git", [&](const YAML::Node& v, const std::string& k) {
               w.map(v, k,
                     {
                         {"diff_max_bytes", size_field(c.git.diff_max_bytes, 256, 1'000'000'000)},
                         {"log_entries", int_field(c.git.log_entries, 0, 1000)},
                     });
             }},
        });
}

}  // namespace

Result<Config> parse_config(std::string_view yaml_text, std::string_view source) {
  Config config;
  Walker walker(source);
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    if (root.IsDefined() && !root.IsNull()) read_config(walker, root, config);
  } catch (const ConfigError& e) {
    return make_error(ErrorCode::invalid_argument, e.message);
  } catch (const YAML::Exception& e) {
    std::ostringstream out;
    out << source;
    if (e.mark.line >= 0) out << ':' << e.mark.line + 1;
    out << ": not valid YAML: " << e.msg;
    return make_error(ErrorCode::invalid_argument, out.str());
  }
  return config;
}

EnvLookup process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
}

Result<void> apply_env(Config& config, const EnvLookup& env) {
  if (auto p = env("LOOPR_PROVIDER")) {
    if (*p != "anthropic" && *p != "openai" && *p != "openai-responses" && *p != "claude-code" &&
        *p != "codex" && *p != "gemini")
      return make_error(ErrorCode::invalid_argument,
                        "LOOPR_PROVIDER: must be one of anthropic | openai | openai-responses | claude-code | codex | gemini, got \"" + *p + "\"");
    config.llm.provider = *p;
  }
  if (auto m = env("LOOPR_MODEL")) config.llm.model = *m;
  if (auto u = env(base_url_variable(config.llm.provider))) config.llm.base_url = *u;
  return ok();
}

const char* base_url_variable(std::string_view provider) {
  if (provider == "openai" || provider == "openai-responses" || provider == "codex")
    return "OPENAI_BASE_URL";
  if (provider == "gemini") return "GOOGLE_GEMINI_BASE_URL";
  return "ANTHROPIC_BASE_URL";
}

namespace {

// `.loopr/config.yml` (or `.loopr`) as a symlink: the file could be anything a tree put there
// (docs/security.md S3.6); loopr reads its own files only through real folders.
Result<void> refuse_linked(const std::filesystem::path& file) {
  std::error_code ec;
  for (const std::filesystem::path& p : {file, file.parent_path()})
    if (std::filesystem::is_symlink(p, ec))
      return make_error(ErrorCode::invalid_argument,
                        p.string() + " is a symlink; loopr reads its own settings only from a "
                                     "real file in a real folder (replace the link with the "
                                     "file it points to, after reading it)");
  return ok();
}

}  // namespace

Result<Config> load_config(const std::string& path, const EnvLookup& env) {
  Config config;
  LOOPR_TRY(refuse_linked(path));
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    LOOPR_ASSIGN(config, parse_config(text.str(), path));
  }
  LOOPR_TRY(apply_env(config, env));
  LOOPR_TRY(check_cli_tools(config, path));
  return config;
}

Result<void> check_cli_tools(const Config& config, std::string_view source) {
  for (const auto& [type, loop] : config.loops) {
    const std::string provider = config.provider_for(to_string(type));
    if (loop.tools.empty() || (provider != "claude-code" && provider != "codex" && provider != "gemini"))
      continue;
    return make_error(ErrorCode::invalid_argument,
                      std::string(source) + ": loops." + to_string(type) +
                          ".tools cannot narrow the tools of " + provider +
                          ", which runs its own (remove the key, or give the type a provider "
                          "loopr drives: anthropic, openai or openai-responses)");
  }
  return ok();
}

std::vector<std::string> SandboxConfig::checkout_paths() const {
  std::vector<std::string> out;
  for (const auto& p : read_only)
    if (!p.empty() && p[0] != '/' && p[0] != '~') out.push_back(p);
  return out;
}

const char* to_string(MergeMode mode) {
  return mode == MergeMode::manual ? "manual" : mode == MergeMode::pr ? "pr" : "auto";
}

const char* to_string(BaselineMode mode) {
  return mode == BaselineMode::warn ? "warn" : mode == BaselineMode::off ? "off" : "block";
}

const char* to_string(FailurePolicy policy) {
  return policy == FailurePolicy::stop_siblings ? "stop_siblings" : "finish_siblings";
}

std::vector<std::string> restart_keys_changed(const Config& a, const Config& b) {
  std::vector<std::string> out;
  if (a.base_branch != b.base_branch) out.push_back("base_branch");
  if (a.llm.provider != b.llm.provider) out.push_back("llm.provider");
  const SandboxConfig &x = a.sandbox, &y = b.sandbox;
  if (x.mode != y.mode || x.network != y.network || x.env != y.env ||
      x.env_values != y.env_values || x.read_only != y.read_only ||
      x.hide != y.hide || x.limits.processes != y.limits.processes || x.limits.open_files != y.limits.open_files ||
      x.limits.file_size != y.limits.file_size || x.limits.memory != y.limits.memory ||
      x.limits.tmp_size != y.limits.tmp_size)
    out.push_back("sandbox");
  if (!same_executor(a.executor, b.executor)) out.push_back("executor");
  return out;
}

namespace {

// A YAML double-quoted scalar.
std::string yaml_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A YAML flow list of double-quoted scalars (patterns start with `*` or hold `#`).
std::string yaml_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + yaml_quoted(items[i]);
  return out + "]";
}

}  // namespace

std::string default_config_yaml(std::string_view base_branch, std::string_view code_validation,
                                const std::vector<std::string>& validation_comment) {
  std::string code_comment;
  for (const auto& line : validation_comment) code_comment += "  # " + line + "\n";
  const ProtectConfig protect;
  std::string out = R"(# loopr configuration. Every key is optional; the values below are the defaults.
# Environment overrides: LOOPR_PROVIDER, LOOPR_MODEL, ANTHROPIC_BASE_URL, OPENAI_BASE_URL.
base_branch: )" + std::string(base_branch) + R"(
merge: auto                      # auto | manual (then `loopr merge PLAN_ID`) | pr (see forge:)
llm:
  provider: anthropic            # anthropic | openai | openai-responses | claude-code | codex | gemini
  model: claude-sonnet-5-5
  max_tokens: 16000
  api_version: "2026-10-21"      # anthropic-version header
  judge: false                   # LLM-as-judge after the format check for plan/spec/phase
  cache: auto                    # auto | off: prompt caching (Anthropic breakpoints, OpenAI prompt_cache_key)
  cache_ttl: 5m                  # 5m | 1h (1h: for loops whose iterations are far apart; writes cost 2x)
concurrency:
  max_loops: 100                 # loops iterating at once; the rest wait as pending
  llm_slots: 4                   # LLM calls in flight
  requests_per_minute: 50
  runners: {default: 8, net: 2, heavy: 1}
limits:                          # per plan tree unless noted
  max_cost_usd: 25
  max_runtime: 4h                # counted from the plan's approval
  circuit_breaker: 5             # consecutive errors in one loop
  no_progress_iterations: 5
  stop_on_patterns: []           # RE2 patterns; a match in validation output stops the loop
  stop_scripts: []               # commands; exit 0 stops the loop, output is the reason
  cooldown: 0s                   # pause between iterations
  min_free_space: 256M           # no iteration starts below it (loops pause, resume by themselves)
  at_cost_limit: pause           # pause | fail: at the cost/runtime/token cap the tree's loops pause
                                 # (`loopr resume ID --max-cost USD` raises the cap) or fail
  max_input_tokens: 0            # per tree, cached input included; 0: no limit
  count_subscription_cost: false # true: an agent CLI's notional cost under a subscription login
                                 # counts against max_cost_usd (it is never billed per token)
attended: false                  # true: loops pause after every iteration (passing too) until `resume`
baseline: block                  # the tests on the base, checked at submit: block | warn | off
sandbox:                         # every command run for a loop (run_command, validation, stop_scripts)
  mode: bubblewrap               # bubblewrap | none (`none` runs the model's commands UNCONFINED)
  network: []                    # runner classes whose commands may use the network, e.g. [net]
  env: []                        # variables for commands: NAME (the daemon's value) or NAME=value,
                                 # e.g. [CARGO_HOME, PYTHONPATH=src]
  read_only: []                  # paths visible read-only: absolute ones where they are, e.g.
                                 # ~/.rustup; relative ones from your checkout, also at the same
                                 # place in every worktree, e.g. [node_modules, .venv]
  hide: []                       # extra paths hidden from commands
  limits: {processes: 1024, open_files: 4096, file_size: 1G, memory: 8G, tmp_size: 1G}
setup:                           # run once in every new worktree, in the sandbox, before its tests
  commands: []                   # e.g. ["make generate"]; a failure blocks the loop with its output
  network: false                 # true: these commands may use the network (e.g. npm ci)
  timeout: 10m                   # per command
loops:
  # Each type may set `model:` and `provider:` of its own (else llm.model / llm.provider),
  # e.g. plan: {max_iterations: 5, model: claude-opus-5-5}
  plan:  {max_iterations: 5}
  spec:  {max_iterations: 5}
  phase: {max_iterations: 5}
)" + code_comment + R"(  code:  {max_iterations: 20, validation: )" + yaml_quoted(code_validation) +
                    R"(, iteration_timeout: 10m, max_turns_per_iteration: 50}
  review: {enabled: false, model: "", max_rounds: 2, max_attempts: 3}  # a reviewer model call after a code loop passes
protect:                         # what a loop may not change on its own (docs/confinement.md "Security model")
  # The test harness (inferred from the test command): a code loop changes it only where its phase
  # lists it under `- Files:`, and a tree that changes it waits for `loopr merge`.
  harness: )" + yaml_list(default_harness(code_validation)) + R"(
  # Existing tests: a code loop modifies or deletes them only where its phase lists them.
  tests: )" + yaml_list(protect.tests) + R"(
  # Other tools' auto-run files: a tree that changes them waits for `loopr merge`.
  hold: )" + yaml_list(protect.hold) + R"(
  # The largest file and the most bytes of added or changed files (as a checkout writes them)
  # a loop's work or a tree may bring; past them it is refused.
  max_file_size: 50M
  max_tree_size: 500M
integration:                     # the finished tree's integration branch runs loops.code.validation
  max_fix_iterations: 5          # before it is merged; a failure gets a fix loop with this budget
forge:                           # merge: pr pushes loopr/<plan> here and opens a pull request
  kind: github                   # github | gitlab
  api_url: https://api.github.com  # gitlab: https://gitlab.com/api/v4
  repo: ""                       # OWNER/NAME; empty: parsed from the remote's URL
  remote: origin                 # the git remote the branch is pushed to
  token_env: GITHUB_TOKEN        # the variable holding the token (gitlab: GITLAB_TOKEN)
  ci: {wait: true, timeout: 2h, fix_iterations: 5, poll_max: 60s}
pricing:                         # USD per million tokens
  claude-opus-5-5:   {input: 4.0, output: 20.0, cache_write: 5.0, cache_read: 0.20}
  claude-sonnet-5-5: {input: 2.0, output: 10.0, cache_write: 2.5, cache_read: 0.20}
  claude-haiku-5-5:  {input: 0.10, output: 0.50, cache_write: 0.125, cache_read: 0.01}
)";
  return out;
}

}  // namespace loopr
