// What confines the claude CLI beyond the command sandbox (issue 28): a private configuration
// folder per loop instead of the person's ~/.claude (where a hook or an MCP server the model
// writes would run unconfined in the person's next session), and the network only through
// loopr's allowlisting proxy (host_proxy.hpp).
#pragma once

#include <filesystem>
#include <string>

#include <loopr/core/result.hpp>

namespace loopr::llm {

/// The port the bridge listens on inside the CLI's sandbox (its loopback is its own).
inline constexpr int kSandboxProxyPort = 3128;

/// Makes `root/<loop_id>` afresh (mode 0700) for one CLI run and seeds it with only what the
/// CLI needs to authenticate, read from the person's `home`: from `~/.claude.json` only the
/// account keys (`oauthAccount`,
/// `userID`, `primaryApiKey`, `customApiKeyResponses`, the onboarding marks). Never their
/// settings, hooks, MCP servers or project history; nothing of it is written back. A subscription
/// login's copy (`.credentials.json`, without its refresh token) is the client's to add
/// (login_refresh.hpp). Returns the folder (the CLI's CLAUDE_CONFIG_DIR).
Result<std::filesystem::path> make_private_claude_config(const std::filesystem::path& root,
                                                         const std::string& loop_id,
                                                         const std::string& home);

}  // namespace loopr::llm
