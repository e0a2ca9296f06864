// An agent CLI as a provider (claude-code, codex, gemini): one process per call, run in the
// loop's worktree, confined the same way whatever the CLI — loopr's sandbox with no network but
// the bridge to the allowlisting proxy (host_proxy.hpp), a private configuration folder per run
// instead of the person's, its installation visible read-only. What differs per CLI (its command
// line, its configuration folder, how its output reads) is a CliDialect.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <loopr/core/process.hpp>
#include <loopr/core/result.hpp>
#include <loopr/llm/client.hpp>
#include <loopr/llm/mcp.hpp>
#include <loopr/llm/pricing.hpp>

#include "llm/providers.hpp"

namespace loopr::llm {

/// Reads one run's stdout as it arrives and says what it came to.
class CliReader {
 public:
  virtual ~CliReader() = default;
  virtual void on_line(std::string_view line) = 0;
  /// The outcome once the process ended (an LlmError for failures, timeouts, no result).
  virtual Outcome finish(const ProcessResult& process, const Pricing& pricing) const = 0;
  /// The CLI's session or thread id (the request id of errors), "" if none was seen.
  virtual std::string session_id() const = 0;
};

class CliDialect {
 public:
  virtual ~CliDialect() = default;
  virtual const std::string& provider() const = 0;
  /// The sandbox's runner class for the CLI's process (`loopr-<cli>-cli`).
  virtual std::string runner_class() const = 0;
  /// argv (argv[0] = settings.command) and the environment added for `request`.
  virtual ProcessSpec spec(const Request& request, const ClaudeCodeSettings& settings) const = 0;
  /// Makes the run's private configuration folder under `root` (afresh, mode 0700) and names it
  /// in `env` (CLAUDE_CONFIG_DIR, CODEX_HOME, …); returns it (made writable in the sandbox).
  virtual Result<std::filesystem::path> private_config(
      const std::filesystem::path& root, const Request& request, const ClaudeCodeSettings& settings,
      std::map<std::string, std::string>& env) const = 0;
  /// Registers `server` (loopr mcp-serve, llm/mcp.hpp) as the MCP server `loopr` for this run,
  /// in the private folder `config` (made by private_config) and/or on `argv`.
  virtual Result<void> register_mcp(const std::filesystem::path& config,
                                    const McpServerEntry& server,
                                    std::vector<std::string>& argv) const = 0;
  virtual std::unique_ptr<CliReader> reader() const = 0;
  /// What the CLI is told when it runs inside loopr's sandbox (only there).
  virtual void in_sandbox(const ClaudeCodeSettings& /*settings*/,
                          std::map<std::string, std::string>& /*env*/) const {}
};

std::unique_ptr<LlmClient> make_agent_cli_client(ClaudeCodeSettings settings,
                                                 std::unique_ptr<CliDialect> dialect,
                                                 net::thread_pool& blocking,
                                                 std::shared_ptr<const Pricing> pricing);

std::unique_ptr<CliDialect> make_codex_dialect();
std::unique_ptr<CliDialect> make_gemini_dialect();

/// What a run that gave no answer comes to: could not start (`install` says what to do),
/// cancelled, timed out; nullopt when the process ran to its end.
std::optional<LlmError> cli_process_failure(const ProcessResult& process, const std::string& cli,
                                            const std::string& install);
/// The end of the CLI's stderr (or output), for error messages.
std::string cli_stderr_tail(const ProcessResult& process);
LlmError cli_error(ErrorKind kind, bool retryable, std::string message);

/// Makes `root/<loop_id>` afresh (mode 0700) for one run; an error names `what`.
Result<std::filesystem::path> fresh_private_dir(const std::filesystem::path& root,
                                                const std::string& loop_id,
                                                const std::string& what);

/// The prompt of a CLI run: the text blocks of the one user message, joined by blank lines.
std::string cli_prompt(const Request& request);

}  // namespace loopr::llm
