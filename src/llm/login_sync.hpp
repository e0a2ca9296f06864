// A subscription login (not an API key) of an agent CLI, kept alive for a whole tree: each
// command gets a copy of the person's login file, the CLI refreshes its token inside that copy
// (its refresh host is allowed through the proxy), and after the command loopr writes the
// refreshed credential back to the person's login file, so the next command, and the person,
// use the new token (a refresh token is often single-use).
//
// The copy is the model's to write: it is read without following a symlink, must be a small
// regular file holding the CLI's shape, and only the credential fields are taken from it, merged
// into the person's file (whose other keys stay), written to a temporary file in the same folder
// with the same mode and renamed over it. Concurrent commands serialise on a lock of the login's
// folder (flock on the folder itself: no file is added there) and re-read under it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/result.hpp>

namespace loopr::llm {

/// One CLI's login: where it lives in the home and in the private folder of a command.
struct LoginFile {
  std::string cli;                  ///< claude | codex | gemini
  std::filesystem::path home_path;  ///< relative to the home (`.claude/.credentials.json`)
  std::filesystem::path copy_path;  ///< relative to the command's private folder
};

/// The login file of `provider` (claude-code, codex, gemini); nullopt for other providers.
std::optional<LoginFile> login_file(const std::string& provider);

/// The hosts a CLI on a login needs besides its API host: where it refreshes its token (and,
/// for codex and gemini, the API a subscription uses): allowed only when a login is used.
std::vector<std::string> login_hosts(const std::string& provider);

/// Whether `provider` runs on the person's login rather than a key: no API key (nor, for codex,
/// another endpoint) in `env`, the CLI's added environment.
bool uses_login(const std::string& provider, const std::map<std::string, std::string>& env);

/// The credential fields of a login of `cli` as the CLI writes it (claude: claudeAiOauth's
/// tokens; codex: tokens and last_refresh; gemini: the OAuth token fields), or nullopt when
/// `doc` does not hold one well-formed.
std::optional<nlohmann::json> credential_fields(const std::string& cli, const nlohmann::json& doc);

/// When the access token of `credentials` (credential_fields) expires, in ms since the epoch
/// (claude expiresAt, gemini expiry_date, codex the access token's `exp`); nullopt: not said.
std::optional<std::int64_t> login_expiry(const std::string& cli, const nlohmann::json& credentials);

/// Reads `path` as a login file: a regular file (no symlink followed, at most 64 KiB) of JSON.
Result<nlohmann::json> read_login(const std::filesystem::path& path);

/// What write_back_login did.
enum class WriteBack { unchanged, written, refused };

struct WriteBackResult {
  WriteBack what = WriteBack::unchanged;
  std::string reason;  ///< why unchanged or refused (for the log)
};

/// Writes the credential fields of the command's copy (`copy`, under the private folder
/// `private_dir`, never followed through a symlink) back into the person's login file `person`
/// when they are well-formed and newer than the person's; everything else stays as it is.
WriteBackResult write_back_login(const std::string& cli, const std::filesystem::path& person,
                                 const std::filesystem::path& private_dir,
                                 const std::filesystem::path& copy);

}  // namespace loopr::llm
