// One agent-CLI run per call (agent_cli.hpp): the process on the blocking pool, its stdout read
// line by line as it arrives, sandboxed as every CLI provider is.
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <loopr/core/loop.hpp>

#include "llm/agent_cli.hpp"
#include "llm/claude_confinement.hpp"
#include "llm/host_proxy.hpp"
#include "llm/login_refresh.hpp"
#include "llm/login_sync.hpp"

namespace loopr::llm {

namespace {

/// One run's channel for loopr's own tools (llm/mcp.hpp), and the short folder it may need.
struct OwnTools {
  std::unique_ptr<McpChannel> channel;
  std::filesystem::path temp_dir;
  ~OwnTools() {
    channel.reset();
    std::error_code ec;
    if (!temp_dir.empty()) std::filesystem::remove_all(temp_dir, ec);
  }
};

class AgentCliClient final : public LlmClient {
 public:
  AgentCliClient(ClaudeCodeSettings settings, std::unique_ptr<CliDialect> dialect,
                 net::thread_pool& blocking, std::shared_ptr<const Pricing> pricing)
      : settings_(std::move(settings)),
        dialect_(std::move(dialect)),
        blocking_(blocking),
        pricing_(std::move(pricing)) {
    if (uses_login(dialect_->provider(), settings_.env)) login_ = login_file(dialect_->provider());
  }

  awaitable<Outcome> complete(const Request& request) override {
    // Only the first user message makes sense: the CLI holds the conversation itself.
    if (request.messages.size() != 1 || request.messages.front().role != Role::user) {
      LlmError e;
      e.kind = ErrorKind::invalid_request;
      e.message = provider() +
                  " takes exactly one user message per call (the CLI runs the tool "
                  "loop itself); a bug in loopr";
      co_return e;
    }
    ProcessSpec spec = dialect_->spec(request, settings_);
    spec.cwd = request.working_dir;
    spec.timeout = request.timeout.count() > 0 ? request.timeout : settings_.default_timeout;
    spec.cancel = request.cancel;
    spec.merge_stderr = false;  // stdout is JSON lines; stderr only explains failures
    spec.output_cap = 64 * 1024;
    std::unique_ptr<CliReader> reader = dialect_->reader();
    spec.on_line = [r = reader.get()](std::string_view line) { r->on_line(line); };
    // On a login: loopr refreshes it first, outside the sandbox (login_refresh.hpp).
    std::optional<nlohmann::json> login;
    if (login_ && !settings_.home.empty()) {
      auto margin = std::max<std::chrono::milliseconds>(spec.timeout, std::chrono::minutes(10));
      auto refresh = [this, margin] { return refresh_login(margin); };
      RefreshOutcome fresh = co_await run_blocking(blocking_, refresh);
      if (!fresh.login && !fresh.absent) co_return login_error(fresh);
      if (fresh.login) login = std::move(fresh.login->doc);
    }
    spdlog::debug("{} loop {}: starting {} in {}", provider(), request.loop_id, settings_.command,
                  spec.cwd);
    exec::Executor* executor = settings_.executor;
    auto run = [&spec, &request, &login, executor, this] {
      if (executor && installation_dirs().empty()) {
        // Not found on the daemon's PATH: say so as an unstartable command would.
        return unstartable("cannot start " + settings_.command + ": No such file or directory");
      }
      return executor ? run_sandboxed(*executor, spec, request, login)
                      : run_unconfined(spec, request, login);
    };
    ProcessResult result = co_await run_blocking(blocking_, run);
    Outcome outcome = reader->finish(result, *pricing_);
    if (!outcome.ok())
      outcome.error().request_id = reader->session_id();
    else
      price(outcome.response(), request);
    co_return outcome;
  }

  bool runs_own_tools() const override { return true; }
  const std::string& provider() const override { return dialect_->provider(); }
  const std::string& model() const override { return settings_.model; }

 private:
  static ProcessResult unstartable(std::string why) {
    ProcessResult r;
    r.spawn_failed = true;
    r.output = std::move(why);
    return r;
  }

  // Unconfined (tests of a client itself): still its own configuration folder, removed after.
  ProcessResult run_unconfined(ProcessSpec& spec, const Request& request,
                               const std::optional<nlohmann::json>& login) {
    auto config = dialect_->private_config(private_root(), request, settings_, spec.env_set);
    Result<void> given =
        config && login ? give_login(*config, *login, spec.env_set) : Result<void>(ok());
    OwnTools own;
    Result<void> served = !config  ? Result<void>(config.error())
                          : !given ? given
                                   : serve_own_tools(request, *config, spec.argv, own);
    if (!served) return unstartable(served.error().message);
    ProcessResult r = run_process(spec);
    own.channel.reset();  // no call reaches the loop after its run
    std::error_code ec;
    std::filesystem::remove_all(*config, ec);
    return r;
  }

  ProcessResult run_sandboxed(exec::Executor& executor, ProcessSpec& spec, const Request& request,
                              const std::optional<nlohmann::json>& login) {
    OwnTools own;
    auto command = sandboxed(spec, request, login, own);
    if (!command) return unstartable(command.error().message);
    ProcessResult r = executor.run(*command);
    own.channel.reset();  // no call reaches the loop after its run
    // Its copy of the person's login goes with the command (docs/security.md, S6.1), never
    // read back (S6.3): the private folder is the command's first writable path.
    std::error_code ec;
    if (!command->writable.empty()) std::filesystem::remove_all(command->writable.front(), ec);
    return r;
  }

  // A CLI that does not say which model answered (codex): the one asked. A CLI that reports no
  // cost (codex, gemini): priced here from its token counts. A subscription: nobody is billed
  // per token (limits.count_subscription_cost).
  void price(Response& r, const Request& request) const {
    if (r.model.empty()) r.model = request.model.empty() ? settings_.model : request.model;
    if (r.usage.cost_usd == 0) r.usage.cost_usd = pricing_->cost_usd(r.model, r.usage);
    if (login_) {
      r.notional_cost_usd = r.usage.cost_usd;
      if (!settings_.count_subscription_cost) r.usage.cost_usd = 0;
    }
  }

  /// The person's login made fresh for a command of `margin` at most (login_refresh.hpp).
  RefreshOutcome refresh_login(std::chrono::milliseconds margin) const {
    const auto path = std::filesystem::path(settings_.home) / login_->home_path;
    RefreshOutcome r = fresh_login(login_->cli, path, margin, settings_.login_token);
    if (r.login && r.login->refreshed)
      spdlog::info("{} CLI: loopr refreshed the login in ~/{}", provider(),
                   login_->home_path.string());
    else if (!r.login && !r.absent)
      spdlog::warn("{} CLI: the login in ~/{} could not be refreshed: {}", provider(),
                   login_->home_path.string(), r.reason);
    return r;
  }

  LlmError login_error(const RefreshOutcome& r) const {
    const std::string& cli = login_->cli;
    // A refused refresh token will not be taken on a retry; a network failure may pass.
    return cli_error(r.transient ? ErrorKind::network : ErrorKind::auth, r.transient,
                     "loopr: the " + cli + " login could not be refreshed (" + r.reason +
                         ") (log in again with `" + cli + "`, or set an API key)");
  }

  /// The command's copy of the login `doc` in its private folder `config`: only what the CLI
  /// needs to call its API now, no refresh token (gemini: the access token in its environment,
  /// which it takes instead of a file).
  Result<void> give_login(const std::filesystem::path& config, const nlohmann::json& doc,
                          std::map<std::string, std::string>& env) const {
    if (login_->cli == "gemini") {
      env["GOOGLE_GENAI_USE_GCA"] = "true";
      env["GOOGLE_CLOUD_ACCESS_TOKEN"] = access_token("gemini", doc);
      return ok();
    }
    const auto path = config / login_->copy_path;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << login_copy(login_->cli, doc, now_ms()).dump();
    out.close();
    ::chmod(path.c_str(), 0600);
    if (!out) return make_error(ErrorCode::io, "cannot write the login copy " + path.string());
    return ok();
  }

  /// The same run as a sandboxed command: the worktree writable; no network but the bridge to
  /// loopr's allowlisting proxy (host_proxy.hpp); a private configuration folder instead of the
  /// person's; its installation visible; only the variables it needs on top of the allowlist.
  Result<exec::Command> sandboxed(const ProcessSpec& spec, const Request& request,
                                  const std::optional<nlohmann::json>& login, OwnTools& own) {
    exec::Command c;
    c.argv = spec.argv;
    c.workdir = spec.cwd;
    // No network, whatever `sandbox.network` grants the runner classes of commands: the
    // proxy is its way out.
    c.network = false;
    c.runner_class = dialect_->runner_class();
    c.stays_local = true;
    c.env = spec.env_set;
    exec::take_process_io(spec, c);
    if (settings_.private_root.empty())
      return make_error(ErrorCode::internal, "the " + provider() +
                                                 " CLI has no private folder for its login (a bug "
                                                 "in loopr)");
    LOOPR_ASSIGN(std::filesystem::path config,
                 dialect_->private_config(private_root(), request, settings_, c.env));
    c.writable.push_back(config);
    if (login) LOOPR_TRY(give_login(config, *login, c.env));
    dialect_->in_sandbox(settings_, c.env);
    LOOPR_TRY(serve_own_tools(request, config, c.argv, own));
    if (!own.temp_dir.empty()) c.writable.push_back(own.temp_dir);
    if (!settings_.bridge.empty()) {
      LOOPR_ASSIGN(std::string socket, proxy_socket());
      std::string proxy = "http://127.0.0.1:" + std::to_string(kSandboxProxyPort);
      for (const char* name : {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"})
        c.env[name] = proxy;
      for (const char* name : {"NO_PROXY", "no_proxy"}) c.env[name] = "";
      std::vector<std::string> cli = std::move(c.argv);
      c.argv = {settings_.bridge, "sandbox-bridge", socket, std::to_string(kSandboxProxyPort),
                "--"};
      c.argv.insert(c.argv.end(), cli.begin(), cli.end());
      c.writable.push_back(socket);
      std::error_code ec;
      auto bridge_dir = std::filesystem::canonical(settings_.bridge, ec).parent_path();
      if (!ec) c.read_only.push_back(bridge_dir);
    }
    for (const auto& dir : installation_dirs()) c.read_only.push_back(dir);
    return c;
  }

  /// loopr's own tools the loop may use (request.tools ∩ share_note, ask_user), served to the
  /// CLI by `loopr mcp-serve` (the loopr binary that runs the bridge, visible in the sandbox)
  /// over a channel in the run's private folder `config`; nothing when there are none.
  Result<void> serve_own_tools(const Request& request, const std::filesystem::path& config,
                               std::vector<std::string>& argv, OwnTools& own) {
    std::vector<ToolDefinition> tools;
    for (const auto& t : request.tools)
      if (is_own_cli_tool(t.name)) tools.push_back(t);
    if (tools.empty() || !request.own_tool || settings_.bridge.empty()) return ok();
    std::filesystem::path socket = config / "loopr-mcp.sock";
    if (socket.native().size() >= 100) {  // sun_path is 108 bytes: a short folder of its own
      std::string tmpl = (std::filesystem::temp_directory_path() / "loopr-mcp-XXXXXX").string();
      if (!::mkdtemp(tmpl.data()))
        return make_error(ErrorCode::io, "cannot make a folder for loopr's MCP channel in " +
                                             std::filesystem::temp_directory_path().string());
      own.temp_dir = tmpl;
      socket = own.temp_dir / "s";
    }
    LOOPR_ASSIGN(own.channel, McpChannel::open(socket, tools, request.own_tool));
    McpServerEntry entry;
    entry.command = settings_.bridge;
    entry.args = {"mcp-serve", socket.string()};
    entry.env = {{"LOOPR_MCP_TOKEN", own.channel->token()}};
    for (const auto& t : tools) entry.tools.push_back(t.name);
    return dialect_->register_mcp(config, entry, argv);
  }

  std::filesystem::path private_root() const {
    if (!settings_.private_root.empty()) return settings_.private_root;
    return std::filesystem::temp_directory_path() /
           ("loopr-" + provider() + "-" + std::to_string(::getpid()));
  }

  // The proxy's socket, the proxy started on first use (one per client, for its lifetime).
  Result<std::string> proxy_socket() {
    std::lock_guard lock(proxy_mutex_);
    if (!proxy_) {
      // A name of its own: a reloaded config makes a new client while the old one still ends.
      static std::atomic<int> made{0};
      std::string name =
          "proxy-" + std::to_string(::getpid()) + "-" + std::to_string(++made) + ".sock";
      std::filesystem::path path = private_root() / name;
      if (path.native().size() >= 100)  // sun_path is 108 bytes
        path = std::filesystem::temp_directory_path() / ("loopr-" + provider() + "-" + name);
      std::error_code ec;
      std::filesystem::create_directories(path.parent_path(), ec);
      const std::string cli = provider() == "claude-code" ? "claude" : provider();
      const std::string key = provider() == "claude-code" ? "claude_code" : provider();
      LOOPR_ASSIGN(proxy_, HostProxy::start(path, settings_.allowed_hosts, cli, key));
      std::string hosts;
      for (const auto& h : settings_.allowed_hosts) hosts += (hosts.empty() ? "" : ", ") + h;
      spdlog::info("{} CLI network: only through {} to {}", provider(), path.string(), hosts);
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
        if (!rel.empty() && *rel.begin() != ".." && *rel.begin() != ".")
          top = fs::path(settings_.home) / *rel.begin();
      }
      out.push_back(top);
    };
    add(fs::absolute(found, ec).parent_path());
    auto real = fs::canonical(found, ec);
    if (!ec) add(real.parent_path());
    // An npm package's launcher (…/node_modules/@openai/codex/bin/codex.js) finds its native
    // binary in a sibling package: the node_modules folder it lives in is needed whole.
    if (!ec)
      for (fs::path p = real.parent_path(); p.has_relative_path(); p = p.parent_path())
        if (p.filename() == "node_modules") {
          add(p);
          break;
        }
    return out;
  }

  ClaudeCodeSettings settings_;
  std::unique_ptr<CliDialect> dialect_;
  std::mutex proxy_mutex_;
  std::unique_ptr<HostProxy> proxy_;
  net::thread_pool& blocking_;
  std::shared_ptr<const Pricing> pricing_;
  std::optional<LoginFile> login_;  ///< set when the CLI runs on the person's login
};

}  // namespace

LlmError cli_error(ErrorKind kind, bool retryable, std::string message) {
  LlmError e;
  e.kind = kind;
  e.retryable = retryable;
  e.type = to_string(kind);
  e.message = std::move(message);
  return e;
}

std::string cli_stderr_tail(const ProcessResult& p) {
  std::string s = p.error_output.empty() ? p.output : p.error_output;
  constexpr std::size_t kTail = 500;
  if (s.size() > kTail) s = "…" + s.substr(s.size() - kTail);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::optional<LlmError> cli_process_failure(const ProcessResult& process, const std::string& cli,
                                            const std::string& install) {
  if (process.spawn_failed)
    return cli_error(
        ErrorKind::process, false,
        "cannot run the " + cli + " CLI (" + cli_stderr_tail(process) + "); " + install);
  if (process.cancelled) return cli_error(ErrorKind::cancelled, false, cli + ": cancelled");
  // A timed-out session already spent the iteration's time: retrying it as-is is not the fix.
  if (process.timed_out)
    return cli_error(ErrorKind::timeout, false,
                     cli + " ran past its timeout of " + std::to_string(process.duration.count()) +
                         " ms and was killed (with its whole process group)");
  return std::nullopt;
}

Result<std::filesystem::path> fresh_private_dir(const std::filesystem::path& root,
                                                const std::string& loop_id,
                                                const std::string& what) {
  std::filesystem::path dir = root / loop_id;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return make_error(ErrorCode::io,
                      "cannot make " + what + " " + dir.string() + ": " + ec.message());
  ::chmod(root.c_str(), 0700);
  ::chmod(dir.c_str(), 0700);
  return dir;
}

std::string cli_prompt(const Request& request) {
  std::string prompt;
  for (const auto& b : request.messages.front().content)
    if (b.type == ContentBlock::Type::text) prompt += prompt.empty() ? b.text : "\n\n" + b.text;
  return prompt;
}

std::unique_ptr<LlmClient> make_agent_cli_client(ClaudeCodeSettings settings,
                                                 std::unique_ptr<CliDialect> dialect,
                                                 net::thread_pool& blocking,
                                                 std::shared_ptr<const Pricing> pricing) {
  return std::make_unique<AgentCliClient>(std::move(settings), std::move(dialect), blocking,
                                          std::move(pricing));
}

}  // namespace loopr::llm
