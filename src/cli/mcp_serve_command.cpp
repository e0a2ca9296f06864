// `loopr mcp-serve SOCKET [--alias NAME=SHOWN]…` (hidden): loopr's own tools as an MCP server for
// an agent CLI, in its sandbox (llm/mcp.hpp). The agent CLI starts it; a person never does.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <loopr/llm/mcp.hpp>

#include "cli/command.hpp"

namespace loopr::cli {

namespace {

// `--alias NAME=SHOWN`: an own tool shown under another name; nullopt after printing the error.
std::optional<llm::McpAliases> parse_aliases(const std::vector<std::string>& given) {
  llm::McpAliases aliases;
  for (const std::string& a : given) {
    auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) {
      std::cerr << "loopr: --alias takes NAME=SHOWN, not `" << a
                << "` (e.g. ask_user=ask_person)\n";
      return std::nullopt;
    }
    aliases[a.substr(0, eq)] = a.substr(eq + 1);
  }
  return aliases;
}

CommandRun define_mcp_serve(CLI::App& mcp) {
  struct Values {
    std::string socket;
    std::vector<std::string> aliases;
  };
  auto v = std::make_shared<Values>();
  mcp.add_option("socket", v->socket)->required();
  mcp.add_option("--alias", v->aliases, "an own tool shown under another name: NAME=SHOWN");
  auto run = [v](Session&) {
    auto aliases = parse_aliases(v->aliases);
    if (!aliases) return 2;
    return llm::run_mcp_serve(v->socket, *aliases);
  };
  return CommandRun(run, [] { return true; });
}

}  // namespace

const Command kMcpServeCommand{"mcp-serve", "loopr's tools as an MCP server for an agent CLI", true,
                               Needs::nothing, define_mcp_serve};

}  // namespace loopr::cli
