// The Claude Code CLI as a provider: one `claude -p` process per call, run in the loop's
// worktree on the blocking pool, its stream-json read line by line as it arrives. The CLI runs
// its own tools, so one call is a whole agentic session.
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include <spdlog/spdlog.h>

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
    auto run = [&spec, executor, this] {
      if (executor && installation_dirs().empty()) {
        // Not found on the daemon's PATH: say so as an unstartable command would.
        ProcessResult missing;
        missing.spawn_failed = true;
        missing.output = "cannot start " + settings_.command + ": No such file or directory";
        return missing;
      }
      return executor ? executor->run(sandboxed(spec)) : run_process(spec);
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

  /// The same run as a sandboxed command: the worktree writable, the network on (the CLI must
  /// reach its model), the CLI's own state (~/.claude, ~/.claude.json) writable, its
  /// installation visible, and only the variables it needs on top of the allowlist.
  exec::Command sandboxed(const ProcessSpec& spec) const {
    exec::Command c;
    c.argv = spec.argv;
    c.workdir = spec.cwd;
    c.network = true;
    c.env = spec.env_set;
    c.timeout = spec.timeout;
    c.cancel = spec.cancel;
    c.merge_stderr = spec.merge_stderr;
    c.output_cap = spec.output_cap;
    c.on_line = spec.on_line;
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!settings_.home.empty()) {
      for (const char* name : {".claude", ".claude.json"}) {
        fs::path p = fs::path(settings_.home) / name;
        if (fs::exists(p, ec)) c.writable.push_back(p);
      }
    }
    for (const auto& dir : installation_dirs()) c.read_only.push_back(dir);
    return c;
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
