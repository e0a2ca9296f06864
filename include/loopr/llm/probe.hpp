// Is the configured model endpoint there? One cheap request (`GET <base>/v1/models`, which no
// provider bills) with a short timeout, for `loopr doctor`.
#pragma once

#include <chrono>
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

/// Sends `GET <llm.base_url>/v1/models` with the provider's key headers (from `env`) on an
/// io_context of its own; blocks at most about `timeout`. Not for `claude-code` (the CLI picks
/// its own endpoint): `failure` says so.
ProbeResult probe_endpoint(const Config& config, const EnvLookup& env,
                           std::chrono::milliseconds timeout);

}  // namespace loopr::llm
