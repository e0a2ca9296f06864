// loopr refreshes an agent CLI's subscription login itself, in the daemon, never in the sandbox:
// before each command, when the access token of the person's login file expires within the
// command's time limit (at least 10 minutes), it posts the refresh token to the provider's OAuth
// token endpoint, as the CLI itself would, and merges the answer into that file (login_sync.hpp:
// under the folder's lock, re-read there, so a single-use refresh token is spent once). The
// command then gets login_copy: the access token, never the refresh token.
//
// The requests, as the CLIs send them (checked against @openai/codex 0.171.0 and
// @google/gemini-cli 0.61.0 in tests/agent_clis, and the claude CLI's public client):
//   claude: POST JSON {grant_type, refresh_token, client_id} to platform.claude.com/v1/oauth/token
//   codex:  POST JSON {client_id, grant_type, refresh_token, scope} to auth.openai.com/oauth/token
//   gemini: POST a form (client_id, client_secret, refresh_token, grant_type) to
//           oauth2.googleapis.com/token (the installed-app client of gemini-cli, public).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace loopr::llm {

/// Where the refresh goes. `url` empty: the CLI's own token endpoint. Tests aim it at a mock
/// on loopback (LOOPR_LOGIN_TOKEN_URL, read by the factory; docs/development.md).
struct TokenEndpoint {
  std::string url;
  std::string ca_file;  ///< extra trusted CAs (llm.ca_file)
  std::chrono::milliseconds timeout{30'000};
};

/// The token endpoint `cli` (claude, codex, gemini) refreshes at.
std::string default_token_url(const std::string& cli);

struct FreshLogin {
  nlohmann::json doc;      ///< the person's login document as it is now
  bool refreshed = false;  ///< this call refreshed it
};

struct RefreshOutcome {
  std::optional<FreshLogin> login;  ///< set on success
  bool transient = false;           ///< a failure worth retrying (5xx, network)
  bool absent = false;              ///< the person has no login file (the CLI says so itself)
  std::string reason;               ///< why it failed, for the error
};

/// Makes sure the login of `cli` in `person` (its file) outlives `margin` from now: refreshes
/// it at `endpoint` when needed and keeps the answer in that file. Blocking (one HTTP exchange
/// at most, under the folder's lock).
RefreshOutcome fresh_login(const std::string& cli, const std::filesystem::path& person,
                           std::chrono::milliseconds margin, const TokenEndpoint& endpoint);

/// What a command of `cli` gets of the login `doc` (credential_fields' shape): only what the CLI
/// needs to call its API now. claude: claudeAiOauth with refreshToken "" ; codex: tokens with
/// refresh_token "" and last_refresh now (so codex does not try a refresh it cannot make).
/// Gemini gets no file: the access token goes in GOOGLE_CLOUD_ACCESS_TOKEN (see the client).
nlohmann::json login_copy(const std::string& cli, const nlohmann::json& doc, std::int64_t now_ms);

/// The access token of the login `doc` of `cli`, "" if none.
std::string access_token(const std::string& cli, const nlohmann::json& doc);

}  // namespace loopr::llm
