// Is the configured model endpoint there? One cheap request (`GET <base>/v1/models`, which no
// provider bills) with a short timeout, for `loopr doctor`.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <loopr/core/config.hpp>

namespace loopr::llm {

struct ProbeResult {
  bool answered = false;  ///< an HTTP response came back (any status)
  int status = 0;         ///< its status
  std::string url;        ///< what was asked
  std::string failure;    ///< why nothing came back (connect refused, timeout, TLS …)
  std::chrono::milliseconds elapsed{0};
};

/// Sends `GET <llm.base_url>/v1/models` (gemini: `/v1beta/models`) with the provider's key
/// headers (from `env`) on an io_context of its own; blocks at most about `timeout`. An agent
/// CLI on the person's login (no key, no base URL) is probed at the API its login uses.
ProbeResult probe_endpoint(const Config& config, const EnvLookup& env,
                           std::chrono::milliseconds timeout);

/// An agent CLI's login file (claude-code, codex, gemini) in `home`, for `loopr doctor`.
struct LoginInfo {
  std::string path;          ///< the file ("" for a provider without one)
  bool present = false;      ///< a regular file is there
  bool well_formed = false;  ///< it holds the CLI's credential fields (a subscription login)
  bool api_key = false;      ///< codex: it holds an API key instead (`codex login --with-api-key`)
  std::optional<std::int64_t> expires_ms;  ///< when its access token expires (ms since epoch)
  std::string problem;                     ///< why it cannot be read, when present
};
LoginInfo inspect_login(const std::string& provider, const std::string& home);

/// Whether `provider` runs on the person's login: an agent CLI with no key in `env` (nor, for
/// codex, another endpoint in llm.base_url).
bool runs_on_login(const Config& config, const std::string& provider, const EnvLookup& env);

}  // namespace loopr::llm
