// A subscription login (not an API key) of an agent CLI, kept alive for a whole tree by loopr
// itself, outside the sandbox (login_refresh.hpp): before each command the daemon reads the
// person's login file, refreshes its token at the provider when it would expire during the
// command, and writes the new credential fields into that one file. The command gets a copy
// holding only what the CLI needs to call its API now (no refresh token), and nothing the
// command leaves in its copy is ever read back (docs/security.md S6.3).
//
// This file is the file-system side: which file each CLI keeps its login in, its shape (the
// credential fields), and update_login, which reads the person's file without following a
// symlink (a regular file of one name, at most 64 KiB, a JSON object) under a lock of its folder
// (flock on the folder itself: no file is added there), and writes a changed document through a
// temporary file in the same folder with the same mode, renamed over it. Concurrent commands
// serialise on that lock and re-read the file under it, so a single-use refresh token is used
// once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
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

/// The hosts a CLI on a login needs besides its API host: the API a subscription uses (codex:
/// chatgpt.com, gemini: cloudcode-pa.googleapis.com), allowed only when a login is used. Never
/// a token host: the command cannot refresh, loopr does.
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

/// `person` (a login document) merged with `fields` (credential_fields): its other keys kept.
nlohmann::json merge_credentials(nlohmann::json person, const nlohmann::json& fields);

/// Given the person's login document read under the lock: the document to write in its place,
/// nullopt to leave the file as it is, or an error (returned by update_login as it is).
using LoginUpdate =
    std::function<Result<std::optional<nlohmann::json>>(const nlohmann::json& current)>;

/// Reads the person's login file `person` under the lock of its folder and runs `update` on it;
/// a document it returns replaces the file atomically (its mode kept). Returns the document the
/// file holds afterwards. not_found: no such file (logged out).
Result<nlohmann::json> update_login(const std::filesystem::path& person, const LoginUpdate& update);

}  // namespace loopr::llm
