// The Claude Code CLI as a provider: `claude -p … --output-format stream-json` per call
// (WIRE.md §3), run and confined by the agent-CLI client (agent_cli.hpp). The CLI runs its own
// tools, so one call is a whole agentic session.
#include <fstream>

#include "llm/agent_cli.hpp"
#include "llm/claude_confinement.hpp"
#include "llm/stream_json.hpp"

namespace loopr::llm {

namespace {

class ClaudeReader final : public CliReader {
 public:
  void on_line(std::string_view line) override { reader_.on_line(line); }
  Outcome finish(const ProcessResult& process, const Pricing& pricing) const override {
    return reader_.finish(process, pricing);
  }
  std::string session_id() const override { return reader_.session_id(); }

 private:
  StreamJsonReader reader_;
};

class ClaudeDialect final : public CliDialect {
 public:
  const std::string& provider() const override { return name_; }
  std::string runner_class() const override { return "loopr-claude-cli"; }

  ProcessSpec spec(const Request& request, const ClaudeCodeSettings& s) const override {
    ProcessSpec spec;
    spec.argv = {s.command,         "-p",          cli_prompt(request),
                 "--output-format", "stream-json", "--verbose"};
    std::string model = request.model.empty() ? s.model : request.model;
    if (!model.empty()) spec.argv.insert(spec.argv.end(), {"--model", model});
    if (s.max_turns > 0)
      spec.argv.insert(spec.argv.end(), {"--max-turns", std::to_string(s.max_turns)});
    if (!s.permission_mode.empty())
      spec.argv.insert(spec.argv.end(), {"--permission-mode", s.permission_mode});
    if (s.skip_permissions) spec.argv.push_back("--dangerously-skip-permissions");
    if (!request.system.empty())
      spec.argv.insert(spec.argv.end(), {"--append-system-prompt", request.system});
    spec.env_set = s.env;
    // The CLI adds these to every API request it makes, so gateways and mock-llm see the loop.
    spec.env_set["ANTHROPIC_CUSTOM_HEADERS"] =
        "x-loopr-loop-id: " + request.loop_id + "\nx-loopr-loop-type: " + request.loop_type;
    return spec;
  }

  Result<std::filesystem::path> private_config(
      const std::filesystem::path& root, const Request& request, const ClaudeCodeSettings& s,
      std::map<std::string, std::string>& env) const override {
    LOOPR_ASSIGN(std::filesystem::path config,
                 make_private_claude_config(root, request.loop_id, s.home));
    env["CLAUDE_CONFIG_DIR"] = config.string();
    for (const char* name :
         {"DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"})
      env[name] = "1";
    return config;
  }

  // --mcp-config names a file of the private folder; --strict-mcp-config: no other server (the
  // person's are not there anyway); the tools are allowed by name (mcp__<server>__<tool>).
  Result<void> register_mcp(const std::filesystem::path& config, const McpServerEntry& server,
                            std::vector<std::string>& argv) const override {
    nlohmann::json env = nlohmann::json::object();
    for (const auto& [k, v] : server.env) env[k] = v;
    nlohmann::json file = {{"mcpServers",
                            {{"loopr",
                              {{"type", "stdio"},
                               {"command", server.command},
                               {"args", server.args},
                               {"env", env}}}}}};
    std::filesystem::path path = config / "loopr-mcp.json";
    std::ofstream out(path, std::ios::trunc);
    out << file.dump(2) << "\n";
    out.close();
    if (!out) return make_error(ErrorCode::io, "cannot write " + path.string());
    std::string allowed;
    for (const auto& t : server.tools)
      allowed += (allowed.empty() ? "" : ",") + ("mcp__loopr__" + t);
    argv.insert(argv.end(),
                {"--mcp-config", path.string(), "--strict-mcp-config", "--allowedTools", allowed});
    return ok();
  }

  std::unique_ptr<CliReader> reader() const override { return std::make_unique<ClaudeReader>(); }

  // Claude Code refuses --dangerously-skip-permissions as root (a container, or loopr's
  // sandbox, whose user namespace maps the person's uid) unless told it runs in a deliberate
  // sandbox: CLAUDE_CODE_BUBBLEWRAP is its own name for this one, and true only here.
  void in_sandbox(const ClaudeCodeSettings& s,
                  std::map<std::string, std::string>& env) const override {
    if (s.skip_permissions) env["CLAUDE_CODE_BUBBLEWRAP"] = "1";
  }

 private:
  std::string name_ = "claude-code";
};

}  // namespace

std::unique_ptr<LlmClient> make_claude_code_client(ClaudeCodeSettings settings,
                                                   net::thread_pool& blocking,
                                                   std::shared_ptr<const Pricing> pricing) {
  return make_agent_cli_client(std::move(settings), std::make_unique<ClaudeDialect>(), blocking,
                               std::move(pricing));
}

}  // namespace loopr::llm
