// Building the configured client: provider, base URL, key from the environment, timeouts.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "llm/agent_cli.hpp"
#include "llm/host_proxy.hpp"
#include "llm/login_sync.hpp"
#include "llm/providers.hpp"

namespace loopr::llm {

namespace {

// The loopr binary that runs the claude CLI's network bridge: this one when it is loopr (the
// daemon); LOOPR_SANDBOX_BRIDGE names another (tests run inside other binaries).
std::string bridge_program(const EnvLookup& env) {
  if (auto set = env("LOOPR_SANDBOX_BRIDGE"); set && !set->empty()) return *set;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return !ec && self.filename() == "loopr" ? self.string() : std::string();
}

/// The API host a CLI provider talks to when llm.base_url is empty.
std::string default_base_url(const std::string& provider) {
  if (provider == "codex") return "https://api.openai.com";
  if (provider == "gemini") return "https://generativelanguage.googleapis.com";
  return "https://api.anthropic.com";
}

// The API host of the base URL and the configured extras, as the proxy compares them.
std::set<std::string> allowed_hosts(const LlmConfig& c) {
  std::set<std::string> out;
  auto endpoint = parse_base_url(c.base_url.empty() ? default_base_url(c.provider) : c.base_url);
  if (endpoint) out.insert(host_port(endpoint->host, endpoint->port));
  const auto& extras = c.provider == "codex"    ? c.codex.allowed_hosts
                       : c.provider == "gemini" ? c.gemini.allowed_hosts
                                                : c.claude_code.allowed_hosts;
  for (const auto& extra : extras) {
    auto parsed = parse_base_url("https://" + extra);
    if (parsed) out.insert(host_port(parsed->host, parsed->port));
  }
  return out;
}

}  // namespace

std::set<std::string> cli_allowed_hosts(const LlmConfig& c,
                                        const std::map<std::string, std::string>& cli_env) {
  std::set<std::string> out = allowed_hosts(c);
  // On the person's login (no key): the API its subscription uses. Never its token host:
  // loopr refreshes the login itself, outside the sandbox (login_refresh.hpp).
  if (uses_login(c.provider, cli_env))
    for (const auto& host : login_hosts(c.provider)) out.insert(host_port(host, "443"));
  return out;
}

namespace {

Result<std::unique_ptr<LlmClient>> make_one_client(const Config& config, const EnvLookup& env,
                                                   net::io_context& io, net::thread_pool& blocking,
                                                   exec::Executor* commands,
                                                   const std::filesystem::path& private_dir) {
  const LlmConfig& c = config.llm;
  auto pricing = std::make_shared<const Pricing>(config.pricing);

  if (c.provider == "claude-code" || c.provider == "codex" || c.provider == "gemini") {
    ClaudeCodeSettings s;
    s.executor = commands;
    s.bridge = bridge_program(env);
    s.count_subscription_cost = config.limits.count_subscription_cost;
    if (auto url = env("LOOPR_LOGIN_TOKEN_URL")) s.login_token.url = *url;  // tests' mock
    s.login_token.ca_file = c.ca_file;
    if (auto home = env("HOME")) s.home = *home;
    if (auto path = env("PATH")) s.path = *path;
    // A whole CLI session is one call: without a per-request timeout it gets the longest
    // iteration time any loop type may use.
    for (const auto& [type, loop] : config.loops)
      s.default_timeout = std::max(s.default_timeout, loop.iteration_timeout);
    // The daemon passes `<run>/claude`; the other CLIs' folders are its siblings.
    auto root_for = [&](const char* name) {
      return private_dir.empty() ? private_dir : private_dir.parent_path() / name;
    };
    if (c.provider == "codex") {
      s.command = c.codex.command;
      s.model = cli_model(c.codex.model, c.model);
      s.reasoning_effort = c.codex.reasoning_effort;
      s.private_root = root_for("codex");
      if (auto key = env("OPENAI_API_KEY")) s.env["OPENAI_API_KEY"] = *key;
      if (!c.base_url.empty()) s.env["OPENAI_BASE_URL"] = c.base_url;
      s.allowed_hosts = cli_allowed_hosts(c, s.env);
      return make_agent_cli_client(std::move(s), make_codex_dialect(), blocking,
                                   std::move(pricing));
    }
    if (c.provider == "gemini") {
      s.command = c.gemini.command;
      s.model = cli_model(c.gemini.model, c.model);
      s.private_root = root_for("gemini");
      for (const char* name : {"GEMINI_API_KEY", "GOOGLE_API_KEY"})
        if (auto key = env(name)) s.env[name] = *key;
      if (!c.base_url.empty()) s.env["GOOGLE_GEMINI_BASE_URL"] = c.base_url;
      s.allowed_hosts = cli_allowed_hosts(c, s.env);
      return make_agent_cli_client(std::move(s), make_gemini_dialect(), blocking,
                                   std::move(pricing));
    }
    s.command = c.claude_code.command;
    s.model = c.model;
    s.permission_mode = c.claude_code.permission_mode;
    s.skip_permissions = c.claude_code.skip_permissions;
    s.max_turns = c.claude_code.max_turns;
    s.private_root = private_dir;
    if (auto key = env("ANTHROPIC_API_KEY")) s.env["ANTHROPIC_API_KEY"] = *key;
    if (!c.base_url.empty()) s.env["ANTHROPIC_BASE_URL"] = c.base_url;
    s.allowed_hosts = cli_allowed_hosts(c, s.env);
    return make_claude_code_client(std::move(s), blocking, std::move(pricing));
  }

  bool anthropic = c.provider == "anthropic";
  if (!anthropic && c.provider != "openai" && c.provider != "openai-responses")
    return make_error(ErrorCode::invalid_argument,
                      "llm.provider '" + c.provider +
                          "' is unknown (anthropic, openai, openai-responses, claude-code, "
                          "codex, gemini)");

  std::string url = c.base_url;
  if (url.empty()) url = anthropic ? "https://api.anthropic.com" : "https://api.openai.com";
  LOOPR_ASSIGN(Endpoint endpoint, parse_base_url(url));
  HttpOptions options;
  options.connect_timeout = c.connect_timeout;
  options.first_byte_timeout = c.first_byte_timeout;
  options.idle_timeout = c.idle_timeout;
  options.ca_file = c.ca_file;
  LOOPR_ASSIGN(auto http, HttpClient::create(io, std::move(endpoint), std::move(options)));
  if (env(anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY").value_or("").empty() && anthropic)
    spdlog::warn("ANTHROPIC_API_KEY is not set: requests to {} will be refused", url);
  return make_http_llm_client(make_wire(config, env), std::move(http), c.stream,
                              std::move(pricing));
}

// The config of another provider than llm.provider: its base URL from its own environment
// variable (ANTHROPIC_BASE_URL, OPENAI_BASE_URL), else llm.base_url (a gateway or a local
// server that speaks both).
Config config_for_provider(const Config& config, const std::string& provider,
                           const EnvLookup& env) {
  Config c = config;
  c.llm.provider = provider;
  if (auto u = env(base_url_variable(provider)); u && !u->empty()) c.llm.base_url = *u;
  return c;
}

}  // namespace

Result<std::unique_ptr<LlmClient>> make_client(const Config& config, const EnvLookup& env,
                                               net::io_context& io, net::thread_pool& blocking,
                                               exec::Executor* commands,
                                               const std::filesystem::path& private_dir) {
  std::vector<std::string> providers = providers_in_use(config);
  if (providers.size() == 1)
    return make_one_client(config, env, io, blocking, commands, private_dir);
  std::map<std::string, std::unique_ptr<LlmClient>> clients;
  for (const std::string& p : providers) {
    Config c = p == config.llm.provider ? config : config_for_provider(config, p, env);
    LOOPR_ASSIGN(auto client, make_one_client(c, env, io, blocking, commands, private_dir));
    clients.emplace(p, std::move(client));
  }
  return make_provider_router(config.llm.provider, std::move(clients));
}

std::unique_ptr<Wire> make_wire(const Config& config, const EnvLookup& env) {
  const LlmConfig& c = config.llm;
  const bool anthropic = c.provider != "openai" && c.provider != "openai-responses";
  WireSettings w;
  w.model = c.model;
  w.max_tokens = c.max_tokens;
  w.key_env = anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  w.api_key = env(w.key_env.c_str()).value_or("");
  w.bearer = c.auth_header != "x-api-key";
  w.api_version = c.api_version;
  w.max_tokens_field = c.max_tokens_field;
  w.cache = c.cache;
  w.cache_ttl_1h = c.cache_ttl_1h;
  if (anthropic) return make_anthropic_wire(std::move(w));
  if (c.provider == "openai-responses") return make_responses_wire(std::move(w));
  return make_openai_wire(std::move(w));
}

}  // namespace loopr::llm
