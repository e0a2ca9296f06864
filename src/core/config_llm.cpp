// `llm:` and the choice of model and provider for each loop role: the config's keys, the
// LOOPR_PROVIDER / LOOPR_MODEL / *_BASE_URL overrides, and the check that `loops.<type>.tools`
// is only given to providers loopr drives itself.
#include <loopr/core/config.hpp>

#include "core/config_sections.hpp"

namespace loopr {

namespace config_detail {

const std::vector<std::string> kProviders = {"anthropic",   "openai", "openai-responses",
                                             "claude-code", "codex",  "gemini"};

namespace {

// `llm.claude_code:` the `claude` CLI.
void read_claude_code(const Fields& f, const YAML::Node& v, const std::string& k,
                      ClaudeCodeConfig& cc) {
  const Walker& w = f.w;
  w.map(v, k,
        {
            {"command", f.str_field(cc.command)},
            {"permission_mode",
             [&](const YAML::Node& v2, const std::string& k2) {
               cc.permission_mode = w.choice(v2, k2,
                                             {"manual", "default", "acceptEdits", "auto",
                                              "bypassPermissions", "dontAsk", "plan"});
             }},
            {"skip_permissions", f.bool_field(cc.skip_permissions)},
            {"max_turns", f.int_field(cc.max_turns, 1, 10000)},
            {"allowed_hosts", [&](const YAML::Node& v2,
                                  const std::string& k2) { cc.allowed_hosts = w.strings(v2, k2); }},
        });
}

// `llm.codex:` the `codex` CLI.
void read_codex(const Fields& f, const YAML::Node& v, const std::string& k, CodexConfig& cx) {
  const Walker& w = f.w;
  w.map(
      v, k,
      {
          {"command", f.str_field(cx.command)},
          {"model", f.str_field(cx.model)},
          {"reasoning_effort",
           [&](const YAML::Node& v2, const std::string& k2) {
             cx.reasoning_effort = w.choice(v2, k2, {"minimal", "low", "medium", "high", "xhigh"});
           }},
          {"allowed_hosts", [&](const YAML::Node& v2,
                                const std::string& k2) { cx.allowed_hosts = w.strings(v2, k2); }},
      });
}

// `llm.gemini:` the `gemini` CLI.
void read_gemini(const Fields& f, const YAML::Node& v, const std::string& k, GeminiConfig& gm) {
  const Walker& w = f.w;
  w.map(v, k,
        {
            {"command", f.str_field(gm.command)},
            {"model", f.str_field(gm.model)},
            {"allowed_hosts", [&](const YAML::Node& v2,
                                  const std::string& k2) { gm.allowed_hosts = w.strings(v2, k2); }},
        });
}

}  // namespace

// `llm:` (the model behind every loop unless its type or role names another)
void read_llm(const Fields& f, const YAML::Node& v, const std::string& k, Config& c) {
  const Walker& w = f.w;
  LlmConfig& llm = c.llm;
  w.map(
      v, k,
      {
          {"provider", [&](const YAML::Node& v2,
                           const std::string& k2) { llm.provider = w.choice(v2, k2, kProviders); }},
          {"model", f.str_field(llm.model)},
          {"max_tokens", f.int_field(llm.max_tokens, 1, 10'000'000)},
          {"api_version", f.str_field(llm.api_version)},
          {"judge", f.bool_field(llm.judge)},
          {"base_url", f.str_field(llm.base_url)},
          {"auth_header",
           [&](const YAML::Node& v2, const std::string& k2) {
             llm.auth_header = w.choice(v2, k2, {"bearer", "x-api-key"});
           }},
          {"ca_file", f.str_field(llm.ca_file)},
          {"stream", f.bool_field(llm.stream)},
          {"max_tokens_field",
           [&](const YAML::Node& v2, const std::string& k2) {
             llm.max_tokens_field = w.choice(v2, k2, {"max_completion_tokens", "max_tokens"});
           }},
          {"connect_timeout", f.dur_field(llm.connect_timeout)},
          {"first_byte_timeout", f.dur_field(llm.first_byte_timeout)},
          {"idle_timeout", f.dur_field(llm.idle_timeout)},
          {"max_retries", f.int_field(llm.max_retries, 0, 100)},
          {"cache",
           [&](const YAML::Node& v2, const std::string& k2) {
             llm.cache = w.choice(v2, k2, {"auto", "off"}) == "auto";
           }},
          {"cache_ttl",
           [&](const YAML::Node& v2, const std::string& k2) {
             llm.cache_ttl_1h = w.choice(v2, k2, {"5m", "1h"}) == "1h";
           }},
          {"claude_code",
           [&](const YAML::Node& v2, const std::string& k2) {
             read_claude_code(f, v2, k2, llm.claude_code);
           }},
          {"codex",
           [&](const YAML::Node& v2, const std::string& k2) { read_codex(f, v2, k2, llm.codex); }},
          {"gemini", [&](const YAML::Node& v2,
                         const std::string& k2) { read_gemini(f, v2, k2, llm.gemini); }},
      });
}

}  // namespace config_detail

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

Result<void> apply_env(Config& config, const EnvLookup& env) {
  if (auto p = env("LOOPR_PROVIDER")) {
    if (*p != "anthropic" && *p != "openai" && *p != "openai-responses" && *p != "claude-code" &&
        *p != "codex" && *p != "gemini")
      return make_error(ErrorCode::invalid_argument,
                        "LOOPR_PROVIDER: must be one of anthropic | openai | openai-responses | "
                        "claude-code | codex | gemini, got \"" +
                            *p + "\"");
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

Result<void> check_cli_tools(const Config& config, std::string_view source) {
  for (const auto& [type, loop] : config.loops) {
    const std::string provider = config.provider_for(to_string(type));
    if (loop.tools.empty() ||
        (provider != "claude-code" && provider != "codex" && provider != "gemini"))
      continue;
    return make_error(ErrorCode::invalid_argument,
                      std::string(source) + ": loops." + to_string(type) +
                          ".tools cannot narrow the tools of " + provider +
                          ", which runs its own (remove the key, or give the type a provider "
                          "loopr drives: anthropic, openai or openai-responses)");
  }
  return ok();
}

}  // namespace loopr
