// Config loading. The YAML is walked against a table of known keys (config_keys.cpp and the
// section files beside it), so an unknown key, a wrong type or a bad value is reported as
// `FILE:LINE: key.path: what is wrong (what to write)`.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <loopr/core/config.hpp>

#include "core/config_sections.hpp"

namespace loopr {

std::map<std::string, Price> Config::default_pricing() {
  return {
      {"claude-opus-5-5", {4.0, 20.0, 5.0, 0.20}},
      {"claude-sonnet-5-5", {2.0, 10.0, 2.5, 0.20}},
      {"claude-haiku-5-5", {0.10, 0.50, 0.125, 0.01}},
  };
}

using config_detail::ConfigError;
using config_detail::read_config;
using config_detail::same_executor;
using config_detail::Walker;

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

namespace {

// `.loopr/config.yml` (or `.loopr`) as a symlink: the file could be anything a tree put there
// (docs/security.md S3.6); loopr reads its own files only through real folders.
Result<void> refuse_linked(const std::filesystem::path& file) {
  std::error_code ec;
  for (const std::filesystem::path& p : {file, file.parent_path()})
    if (std::filesystem::is_symlink(p, ec))
      return make_error(ErrorCode::invalid_argument,
                        p.string() +
                            " is a symlink; loopr reads its own settings only from a "
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

const char* to_string(MergeMode mode) {
  return mode == MergeMode::manual ? "manual" : mode == MergeMode::pr ? "pr" : "auto";
}

const char* to_string(BaselineMode mode) {
  return mode == BaselineMode::warn ? "warn" : mode == BaselineMode::off ? "off" : "block";
}

const char* to_string(ExecutorKind kind) { return kind == ExecutorKind::slurm ? "slurm" : "local"; }

const char* to_string(ForgeKind kind) { return kind == ForgeKind::gitlab ? "gitlab" : "github"; }

const char* to_string(FailurePolicy policy) {
  return policy == FailurePolicy::stop_siblings ? "stop_siblings" : "finish_siblings";
}

std::vector<std::string> restart_keys_changed(const Config& a, const Config& b) {
  std::vector<std::string> out;
  if (a.base_branch != b.base_branch) out.push_back("base_branch");
  if (a.llm.provider != b.llm.provider) out.push_back("llm.provider");
  const SandboxConfig &x = a.sandbox, &y = b.sandbox;
  if (x.mode != y.mode || x.network != y.network || x.env != y.env ||
      x.env_values != y.env_values || x.read_only != y.read_only || x.hide != y.hide ||
      x.limits.processes != y.limits.processes || x.limits.open_files != y.limits.open_files ||
      x.limits.file_size != y.limits.file_size || x.limits.memory != y.limits.memory ||
      x.limits.tmp_size != y.limits.tmp_size)
    out.push_back("sandbox");
  if (!same_executor(a.executor, b.executor)) out.push_back("executor");
  return out;
}

}  // namespace loopr
