// The concrete clients behind LlmClient, for the factory (and tests that build one directly).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <memory>
#include <string>

#include <loopr/llm/client.hpp>
#include <loopr/llm/pricing.hpp>

#include "llm/http_client.hpp"
#include "llm/login_refresh.hpp"
#include "llm/wire.hpp"

namespace loopr::llm {

/// The wire `config.llm.provider` speaks (anthropic, or openai), its key from `env`.
std::unique_ptr<Wire> make_wire(const Config& config, const EnvLookup& env);

/// Anthropic or OpenAI-compatible, by `wire`, over `http`.
std::unique_ptr<LlmClient> make_http_llm_client(std::unique_ptr<Wire> wire,
                                                std::unique_ptr<HttpTransport> http, bool stream,
                                                std::shared_ptr<const Pricing> pricing);

/// The settings of an agent-CLI provider (claude-code, codex, gemini: agent_cli.hpp); named
/// for the first of them.
struct ClaudeCodeSettings {
  std::string command = "claude";
  std::string model;              ///< passed as --model (empty: the CLI's default)
  std::string permission_mode;    ///< --permission-mode (empty: not passed)
  bool skip_permissions = false;  ///< --dangerously-skip-permissions
  int max_turns = 0;              ///< --max-turns (0: not passed)
  std::string reasoning_effort;   ///< codex: model_reasoning_effort (empty: the CLI's default)
  /// Added to the CLI's environment: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL. The key travels
  /// only this way, never on the command line (other users can read argv).
  std::map<std::string, std::string> env;
  std::chrono::milliseconds default_timeout{std::chrono::minutes(10)};
  /// The sandbox the CLI runs in (no network but loopr's proxy, a private configuration
  /// folder); nullptr: unconfined (tests of the client itself).
  exec::Executor* executor = nullptr;
  std::string home;  ///< the user's home (where ~/.claude is: read to seed the private folder)
  std::string path;  ///< PATH, to find the CLI's installation
  /// The loopr binary, whose `sandbox-bridge` carries the CLI's connections out of its
  /// sandbox to the proxy; empty: the sandboxed CLI has no network at all.
  std::string bridge;
  /// Where each loop's private CLAUDE_CONFIG_DIR is made (`.loopr/run/claude/<loop id>`).
  std::filesystem::path private_root;
  /// `host:port` (llm/host_proxy.hpp `host_port`) the CLI may reach through the proxy.
  std::set<std::string> allowed_hosts;
  /// limits.count_subscription_cost: a run on a login counts its notional cost.
  bool count_subscription_cost = false;
  /// Where loopr refreshes the person's login (login_refresh.hpp): the CLI's own endpoint
  /// unless LOOPR_LOGIN_TOKEN_URL (a test seam) says otherwise; llm.ca_file.
  TokenEndpoint login_token;
};

/// The `host:port`s an agent CLI of `c.provider` may reach through the proxy: the API host of
/// the base URL, the configured extras and, when it runs on a login (`cli_env` has no key),
/// the API its subscription uses (login_sync.hpp `login_hosts`; never a token host).
std::set<std::string> cli_allowed_hosts(const LlmConfig& c,
                                        const std::map<std::string, std::string>& cli_env);

std::unique_ptr<LlmClient> make_claude_code_client(ClaudeCodeSettings settings,
                                                   net::thread_pool& blocking,
                                                   std::shared_ptr<const Pricing> pricing);

/// One client answering for several providers, by Request::provider (empty or unknown: `first`).
std::unique_ptr<LlmClient> make_provider_router(
    std::string first, std::map<std::string, std::unique_ptr<LlmClient>> clients);

}  // namespace loopr::llm
