// The Claude Code CLI as a provider: one `claude -p` process per call, run in the loop's
// worktree on the blocking pool, its stream-json read line by line as it arrives. The CLI runs
// its own tools, so one call is a whole agentic session.
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
    ProcessResult result = co_await run_blocking(blocking_, [&spec] { return run_process(spec); });
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
