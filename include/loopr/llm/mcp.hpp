// loopr's own tools (share_note, ask_user) for the agent CLIs (issue 46 point 6): the CLI starts
// `loopr mcp-serve` inside its sandbox as an MCP server over stdio; mcp-serve forwards each tool
// call over a per-command channel to the daemon, which applies it to the command's loop only.
//
// The channel: a Unix socket the daemon makes in the command's private folder (the only
// writable folder of the command's sandbox that holds it; no other command's sandbox sees it),
// plus a random per-command token. The loop is bound to the channel on the daemon's side; what
// mcp-serve or the model send never names it. Protocol: one JSON object per line each way,
//   -> {"token": T, "op": "list"}                                <- {"tools": [{name, description,
//   input_schema}]}
//   -> {"token": T, "op": "call", "name": N, "arguments": {...}} <- {"text": S, "is_error": B}
//                                                                   or {"unknown": true, "text": S}
// A wrong token is answered {"error": …} and the connection closed.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <loopr/core/result.hpp>
#include <loopr/llm/types.hpp>

namespace loopr::llm {

/// The longest line either side of the channel or mcp-serve's stdin reads (bytes).
inline constexpr std::size_t kMcpLineMax = 256 * 1024;

/// What a call of an own tool came to: the text for the model, whether it is an error.
using OwnToolCall = std::function<std::pair<std::string, bool>(const std::string& name,
                                                               const nlohmann::json& arguments)>;

/// The daemon's end of one command's channel: listens on `socket` until destroyed, serving the
/// `tools` (already narrowed to what the loop may use) through `call`, one connection at a time,
/// on a thread of its own. `call` runs on that thread.
class McpChannel {
 public:
  static Result<std::unique_ptr<McpChannel>> open(std::filesystem::path socket,
                                                  std::vector<ToolDefinition> tools,
                                                  OwnToolCall call);
  virtual ~McpChannel() = default;
  virtual const std::filesystem::path& socket() const = 0;
  /// The per-command secret mcp-serve presents (LOOPR_MCP_TOKEN).
  virtual const std::string& token() const = 0;
};

/// The names of loopr's own tools an agent CLI reaches through mcp-serve.
bool is_own_cli_tool(std::string_view name);

/// How a CLI starts mcp-serve: `command args…` with `env` (the MCP server entry of its config).
struct McpServerEntry {
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> tools;  ///< the own tools served (claude's --allowedTools)
};

/// loopr's name of an own tool → the name a CLI is shown instead (`mcp-serve --alias N=S`):
/// gemini's headless mode drops every tool named `ask_user`, an MCP server's too, so it is shown
/// `ask_person` there. A call of the shown name reaches loopr's tool.
using McpAliases = std::map<std::string, std::string>;

/// One JSON-RPC 2.0 line of the MCP client (the CLI) answered: the reply line, or nullopt for a
/// notification. `forward` sends one channel request and returns the reply (nullopt: the
/// channel is gone). Never throws; malformed input is a JSON-RPC error.
std::optional<std::string> mcp_reply(
    std::string_view line,
    const std::function<std::optional<nlohmann::json>(const nlohmann::json&)>& forward,
    const McpAliases& aliases = {});

/// `loopr mcp-serve SOCKET [--alias N=S]…` (token in LOOPR_MCP_TOKEN): stdio until EOF.
/// Returns the exit code.
int run_mcp_serve(const std::string& socket, const McpAliases& aliases = {});

}  // namespace loopr::llm
