// The Claude Code CLI as a provider: one `claude -p` process per call, run in the loop's
// worktree on the blocking pool, its stream-json read line by line as it arrives. The CLI runs
// its own tools, so one call is a whole agentic session.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <sstream>

#include <spdlog/spdlog.h>

#include "llm/claude_confinement.hpp"
#include "llm/host_proxy.hpp"
#include "llm/providers.hpp"
#include "llm/stream_json.hpp"

namespace loopr::llm {

namespace {

class ClaudeCodeClient final : public LlmClient {
 public:
  ClaudeCodeClient(ClaudeCodeSettings settings, net::thread_pool& blocking,
                   std::shared_ptr<const Pricing> pricing)
      : settings_(std::move(settings)), blocking_(blocking), pricing_(std::move(pricing)) {}

  awaitable<Outcome> complete(const Request& request) override {
    // Only the first user message makes sense: the CLI holds the conversation itself.
    if (request.messages.size() != 1 || request.messages.front().role != Role::user) {
      LlmError e;
      e.kind = ErrorKind::invalid_request;
      e.message =
          "claude-code takes exactly one user message per call (the CLI runs the tool "
          "loop itself); a bug in loopr";
      co_return e;
    }
    ProcessSpec spec = process_spec(request);
    StreamJsonReader reader;
    spec.on_line = [&reader](std::string_view line) { reader.on_line(line); };
    spdlog::debug("claude-code loop {}: starting {} in {}", request.loop_id, settings_.command,
                  spec.cwd);
    exec::Executor* executor = settings_.executor;
    auto run = [&spec, executor, this, loop_id = request.loop_id] {
      ProcessResult unstartable;
      unstartable.spawn_failed = true;
      if (executor && installation_dirs().empty()) {
        // Not found on the daemon's PATH: say so as an unstartable command would.
        unstartable.output = "cannot start " + settings_.command + ": No such file or directory";
        return unstartable;
      }
      if (!executor) return run_process(spec);
      auto command = sandboxed(spec, loop_id);
      if (!command) {
        unstartable.output = command.error().message;
        return unstartable;
      }
      ProcessResult r = executor->run(*command);
      // Its copy of the person's login goes with the command (docs/security.md, S6.1).
      std::error_code ec;
      std::filesystem::remove_all(command->env["CLAUDE_CONFIG_DIR"], ec);
      return r;
    };
    ProcessResult result = co_await run_blocking(blocking_, run);
    Outcome outcome = reader.finish(result, *pricing_);
    if (!outcome.ok()) outcome.error().request_id = reader.session_id();
    co_return outcome;
  }

  bool runs_own_tools() const override { return true; }
  const std::string& provider() const override { return name_; }
  const std::string& model() const override { return settings_.model; }

  /// The command line and environment of one run (also what tests assert on).
  ProcessSpec process_spec(const Request& request) const {
    std::string prompt;
    for (const auto& b : request.messages.front().content)
      if (b.type == ContentBlock::Type::text) prompt += prompt.empty() ? b.text : "\n\n" + b.text;
    ProcessSpec spec;
    spec.argv = {settings_.command, "-p", prompt, "--output-format", "stream-json", "--verbose"};
    std::string model = request.model.empty() ? settings_.model : request.model;
    if (!model.empty()) spec.argv.insert(spec.argv.end(), {"--model", model});
    if (settings_.max_turns > 0)
      spec.argv.insert(spec.argv.end(), {"--max-turns", std::to_string(settings_.max_turns)});
    if (!settings_.permission_mode.empty())
      spec.argv.insert(spec.argv.end(), {"--permission-mode", settings_.permission_mode});
    if (settings_.skip_permissions) spec.argv.push_back("--dangerously-skip-permissions");
    if (!request.system.empty())
      spec.argv.insert(spec.argv.end(), {"--append-system-prompt", request.system});
    spec.cwd = request.working_dir;
    spec.env_set = settings_.env;
    // The CLI adds these to every API request it makes, so gateways and mock-llm see the loop.
    spec.env_set["ANTHROPIC_CUSTOM_HEADERS"] =
        "x-loopr-loop-id: " + request.loop_id + "\nx-loopr-loop-type: " + request.loop_type;
    spec.timeout = request.timeout.count() > 0 ? request.timeout : settings_.default_timeout;
    spec.cancel = request.cancel;
    spec.merge_stderr = false;  // stdout is NDJSON; stderr only explains failures
    spec.output_cap = 64 * 1024;
    return spec;
  }

  /// The same run as a sandboxed command: the worktree writable; no network but the bridge to
  /// loopr's allowlisting proxy (host_proxy.hpp); a private configuration folder instead of the
  /// person's ~/.claude (claude_confinement.hpp); its installation visible; only the variables
  /// it needs on top of the allowlist.
  Result<exec::Command> sandboxed(const ProcessSpec& spec, const std::string& loop_id) {
    exec::Command c;
    c.argv = spec.argv;
    c.workdir = spec.cwd;
    // No network, whatever `sandbox.network` grants the runner classes of commands: the
    // proxy is its way out.
    c.network = false;
    c.runner_class = "loopr-claude-cli";
    c.stays_local = true;
    c.env = spec.env_set;
    c.timeout = spec.timeout;
    c.cancel = spec.cancel;
    c.merge_stderr = spec.merge_stderr;
    c.output_cap = spec.output_cap;
    c.on_line = spec.on_line;
    if (private_root().empty())
      return make_error(ErrorCode::internal,
                        "the claude CLI has no private folder for its login (a bug in loopr)");
    LOOPR_ASSIGN(std::filesystem::path config,
                 make_private_claude_config(private_root(), loop_id, settings_.home));
    c.env["CLAUDE_CONFIG_DIR"] = config.string();
    c.writable.push_back(config);
    for (const char* name : {"DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY",
                             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"})
      c.env[name] = "1";
    if (!settings_.bridge.empty()) {
      LOOPR_ASSIGN(std::string socket, proxy_socket());
      std::string proxy = "http://127.0.0.1:" + std::to_string(kSandboxProxyPort);
      for (const char* name : {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"})
        c.env[name] = proxy;
      for (const char* name : {"NO_PROXY", "no_proxy"}) c.env[name] = "";
      c.argv = {settings_.bridge, "sandbox-bridge", socket, std::to_string(kSandboxProxyPort),
                "--"};
      c.argv.insert(c.argv.end(), spec.argv.begin(), spec.argv.end());
      c.writable.push_back(socket);
      std::error_code ec;
      auto bridge_dir = std::filesystem::canonical(settings_.bridge, ec).parent_path();
      if (!ec) c.read_only.push_back(bridge_dir);
    }
    for (const auto& dir : installation_dirs()) c.read_only.push_back(dir);
    return c;
  }

  // Under loopr's own run folder (the daemon's `.loopr/run/claude`), never a shared temp folder:
  // each loop's folder there holds a copy of the person's login while its CLI runs.
  const std::filesystem::path& private_root() const { return settings_.private_root; }

  // The proxy's socket, the proxy started on first use (one per client, for its lifetime).
  Result<std::string> proxy_socket() {
    std::lock_guard lock(proxy_mutex_);
    if (!proxy_) {
      // A name of its own: a reloaded config makes a new client while the old one still ends.
      static std::atomic<int> made{0};
      std::string name = "proxy-" + std::to_string(::getpid()) + "-" + std::to_string(++made) + ".sock";
      std::filesystem::path path = private_root() / name;
      if (private_root().empty() || path.native().size() >= 100)  // sun_path is 108 bytes
        path = std::filesystem::temp_directory_path() / ("loopr-claude-" + name);
      LOOPR_ASSIGN(proxy_, HostProxy::start(path, settings_.allowed_hosts));
      std::string hosts;
      for (const auto& h : settings_.allowed_hosts) hosts += (hosts.empty() ? "" : ", ") + h;
      spdlog::info("claude CLI network: only through {} to {}", path.string(), hosts);
    }
    return proxy_->path().string();
  }

  /// Where the CLI is installed (its PATH entry and where that link points), so it is visible
  /// in the sandbox even under the hidden home (~/.nvm, ~/.local) or a private /tmp.
  std::vector<std::filesystem::path> installation_dirs() const {
    namespace fs = std::filesystem;
    std::vector<fs::path> out;
    fs::path found;
    if (settings_.command.find('/') != std::string::npos) {
      if (::access(settings_.command.c_str(), X_OK) == 0) found = settings_.command;
    } else {
      std::stringstream dirs(settings_.path);
      for (std::string dir; std::getline(dirs, dir, ':');) {
        if (dir.empty()) continue;
        fs::path candidate = fs::path(dir) / settings_.command;
        if (::access(candidate.c_str(), X_OK) == 0) {
          found = candidate;
          break;
        }
      }
    }
    if (found.empty()) return out;
    std::error_code ec;
    auto add = [&](const fs::path& p) {
      if (p.empty()) return;
      fs::path top = p;
      // Under the home: its first folder (~/.nvm, ~/.local), which holds node as well.
      if (!settings_.home.empty()) {
        auto rel = p.lexically_relative(settings_.home);
        if (!rel.empty() && *rel.begin() != ".." && *rel.begin() != ".") top = fs::path(settings_.home) / *rel.begin();
      }
      out.push_back(top);
    };
    add(fs::absolute(found, ec).parent_path());
    auto real = fs::canonical(found, ec);
    if (!ec) add(real.parent_path());
    return out;
  }

 private:
  ClaudeCodeSettings settings_;
  std::mutex proxy_mutex_;
  std::unique_ptr<HostProxy> proxy_;
  net::thread_pool& blocking_;
  std::shared_ptr<const Pricing> pricing_;
  std::string name_ = "claude-code";
};

}  // namespace

std::unique_ptr<LlmClient> make_claude_code_client(ClaudeCodeSettings settings,
                                                   net::thread_pool& blocking,
                                                   std::shared_ptr<const Pricing> pricing) {
  return std::make_unique<ClaudeCodeClient>(std::move(settings), blocking, std::move(pricing));
}

}  // namespace loopr::llm
