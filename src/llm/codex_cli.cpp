// The Codex CLI as a provider (`llm.provider: codex`, issue 46): `codex exec --json` per call in
// the loop's worktree, run and confined by the agent-CLI client (agent_cli.hpp). Its JSON lines
// (thread.started, item.started/completed with agent_message, command_execution, file_change,
// mcp_tool_call, reasoning items, turn.completed with usage, turn.failed, error) become loopr's
// transcript and answer.
//
// Codex's own sandbox is OFF (`--dangerously-bypass-approvals-and-sandbox`): it would have to
// nest a second bubblewrap/Landlock sandbox inside loopr's, which an unprivileged sandbox cannot
// do reliably, and loopr's sandbox is the boundary anyway (worktree writable, home hidden, no
// network but the proxy). CODEX_HOME is a private folder per run with a config.toml loopr
// writes; the person's ~/.codex is never read but for a copy of its login (auth.json).
#include <cstdio>
#include <fstream>

#include "llm/agent_cli.hpp"
#include "llm/json_util.hpp"

namespace loopr::llm {

using nlohmann::json;

namespace {

/// A TOML basic string: quotes, backslashes and control characters escaped.
std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

class CodexReader final : public CliReader {
 public:
  void on_line(std::string_view line) override {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return;  // codex prints a few plain lines too
    const std::string type = string_field(j, "type");
    if (type == "thread.started") {
      thread_id_ = string_field(j, "thread_id");
    } else if (type == "item.completed" && j.contains("item")) {
      add_item(j["item"]);
    } else if (type == "turn.completed") {
      completed_ = true;
      if (j.contains("usage")) {
        const json& u = j["usage"];
        std::int64_t input = 0, cached = 0, output = 0;
        read_count(u, "input_tokens", input);
        read_count(u, "cached_input_tokens", cached);
        read_count(u, "output_tokens", output);
        // input_tokens includes the cached part; loopr counts them apart.
        usage_.input_tokens += input - cached;
        usage_.cache_read_tokens += cached;
        usage_.output_tokens += output;
      }
    } else if (type == "turn.failed") {
      const json& e = j.contains("error") ? j["error"] : json::object();
      failure_ = string_field(e, "message");
      if (failure_.empty()) failure_ = "the turn failed";
    } else if (type == "error") {
      last_error_ = string_field(j, "message");
    }
  }

  Outcome finish(const ProcessResult& process, const Pricing& pricing) const override {
    if (auto e = cli_process_failure(process, "codex",
                                     "install Codex CLI (npm install -g @openai/codex) or set "
                                     "llm.codex.command"))
      return *e;
    if (!failure_.empty() || !completed_) {
      std::string detail = !failure_.empty()      ? failure_
                           : !last_error_.empty() ? last_error_
                                                  : cli_stderr_tail(process);
      std::string how = process.term_signal != 0
                            ? "was killed by signal " + std::to_string(process.term_signal)
                            : "exited with status " + std::to_string(process.exit_code);
      return classify(completed_ || !failure_.empty()
                          ? "codex reported an error"
                          : "codex " + how + " without finishing its turn",
                      detail);
    }
    Response out;
    out.content.push_back(ContentBlock::make_text(last_message_));
    out.stop_reason = StopReason::end_turn;
    out.stop_reason_text = "turn.completed";
    out.id = thread_id_;
    out.request_id = thread_id_;
    out.num_turns = 1 + tool_calls_;
    out.usage = usage_;
    // Codex reports neither the model nor a cost: the client prices the model it asked for.
    (void)pricing;
    out.transcript = transcript_;
    return out;
  }

  std::string session_id() const override { return thread_id_; }

 private:
  /// Codex's own retries are used up when it gives up: what it says decides as WIRE.md §1 does.
  static LlmError classify(const std::string& head, const std::string& detail) {
    std::string text = head + (detail.empty() ? "" : ": " + detail);
    auto has = [&](const char* s) { return detail.find(s) != std::string::npos; };
    if (has("401") || has("Unauthorized") || has("unauthorized"))
      return cli_error(
          ErrorKind::auth, false,
          "OPENAI_API_KEY (or the codex login) is missing or was refused (401): " + detail);
    if (has("429") || has("rate limit") || has("Rate limit") || has("usage limit"))
      return cli_error(ErrorKind::rate_limited, true, text);
    if (has("500") || has("502") || has("503") || has("stream disconnected") || has("Reconnecting"))
      return cli_error(ErrorKind::server, true, text);
    return cli_error(ErrorKind::process, false, text);
  }

  void add_item(const json& item) {
    const std::string type = string_field(item, "type");
    const std::string id = string_field(item, "id");
    if (type == "agent_message") {
      last_message_ = string_field(item, "text");
      assistant().content.push_back(ContentBlock::make_text(last_message_));
    } else if (type == "command_execution") {
      std::int64_t exit_code = 0;
      read_count(item, "exit_code", exit_code);
      tool(id, "shell", {{"command", string_field(item, "command")}},
           string_field(item, "aggregated_output"), exit_code != 0);
    } else if (type == "file_change") {
      json changes = item.contains("changes") ? item["changes"] : json::array();
      tool(id, "apply_patch", {{"changes", changes}}, string_field(item, "status"),
           string_field(item, "status") == "failed");
    } else if (type == "mcp_tool_call") {
      tool(id, string_field(item, "server") + "." + string_field(item, "tool"),
           item.contains("arguments") ? item["arguments"] : json::object(),
           string_field(item, "status"), string_field(item, "status") == "failed");
    } else if (type == "web_search") {
      tool(id, "web_search", {{"query", string_field(item, "query")}}, "", false);
    }  // reasoning, todo_list, error items: nothing loopr keeps
  }

  Message& assistant() {
    if (transcript_.empty() || transcript_.back().role != Role::assistant)
      transcript_.push_back(Message{Role::assistant, {}});
    return transcript_.back();
  }

  void tool(const std::string& id, const std::string& name, json input, const std::string& output,
            bool failed) {
    ++tool_calls_;
    assistant().content.push_back(ContentBlock::make_tool_use(id, name, std::move(input)));
    transcript_.push_back(
        Message{Role::user, {ContentBlock::make_tool_result(id, output, failed)}});
  }

  std::string thread_id_, last_message_, failure_, last_error_;
  std::vector<Message> transcript_;
  Usage usage_;
  int tool_calls_ = 0;
  bool completed_ = false;
};

class CodexDialect final : public CliDialect {
 public:
  const std::string& provider() const override { return name_; }
  std::string runner_class() const override { return "loopr-codex-cli"; }

  ProcessSpec spec(const Request& request, const ClaudeCodeSettings& s) const override {
    ProcessSpec spec;
    spec.argv = {s.command,
                 "exec",
                 "--json",
                 "--ephemeral",
                 "--skip-git-repo-check",
                 "--dangerously-bypass-approvals-and-sandbox",
                 "--color",
                 "never",
                 "--cd",
                 request.working_dir.empty() ? "." : request.working_dir};
    std::string model = request.model.empty() ? s.model : request.model;
    if (!model.empty()) spec.argv.insert(spec.argv.end(), {"--model", model});
    spec.argv.insert(spec.argv.end(), {"--", cli_prompt(request)});
    spec.env_set = s.env;
    return spec;
  }

  Result<std::filesystem::path> private_config(
      const std::filesystem::path& root, const Request& request, const ClaudeCodeSettings& s,
      std::map<std::string, std::string>& env) const override {
    LOOPR_ASSIGN(std::filesystem::path dir,
                 fresh_private_dir(root, request.loop_id, "the codex CLI's CODEX_HOME"));
    const bool own_endpoint = s.env.count("OPENAI_BASE_URL") || s.env.count("OPENAI_API_KEY");
    // On a login, the client writes its copy here (auth.json, without the refresh token).
    std::ofstream out(dir / "config.toml", std::ios::trunc);
    out << "# Written by loopr for one run; the person's ~/.codex is not used.\n"
        << "check_for_update_on_startup = false\n";
    if (!s.reasoning_effort.empty())
      out << "model_reasoning_effort = " << toml_string(s.reasoning_effort) << "\n";
    if (!request.system.empty())
      out << "developer_instructions = " << toml_string(request.system) << "\n";
    if (own_endpoint) {
      // An API key or another endpoint: a provider of loopr's, which also carries the loop's
      // headers to gateways and mock-llm. Without either, codex's own (a ChatGPT login).
      auto base = s.env.count("OPENAI_BASE_URL") ? s.env.at("OPENAI_BASE_URL")
                                                 : std::string("https://api.openai.com");
      while (!base.empty() && base.back() == '/') base.pop_back();
      out << "model_provider = \"loopr\"\n\n[model_providers.loopr]\n"
          << "name = \"loopr\"\nbase_url = " << toml_string(base + "/v1") << "\n"
          << "env_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n"
          << "http_headers = { \"x-loopr-loop-id\" = " << toml_string(request.loop_id)
          << ", \"x-loopr-loop-type\" = " << toml_string(request.loop_type) << " }\n";
    }
    out.close();
    if (!out) return make_error(ErrorCode::io, "cannot write " + (dir / "config.toml").string());
    env["CODEX_HOME"] = dir.string();
    env.erase("OPENAI_BASE_URL");  // in config.toml; the variable would override the provider
    return dir;
  }

  // A table of CODEX_HOME/config.toml, after what private_config wrote; codex passes the server
  // only the variables named in `env` (and its own few), so the token is there.
  Result<void> register_mcp(const std::filesystem::path& config, const McpServerEntry& server,
                            std::vector<std::string>& /*argv*/) const override {
    std::ofstream out(config / "config.toml", std::ios::app);
    out << "\n[mcp_servers.loopr]\ncommand = " << toml_string(server.command) << "\nargs = [";
    for (std::size_t i = 0; i < server.args.size(); ++i)
      out << (i ? ", " : "") << toml_string(server.args[i]);
    out << "]\nstartup_timeout_sec = 30\ntool_timeout_sec = 120\n\n[mcp_servers.loopr.env]\n";
    for (const auto& [k, v] : server.env) out << k << " = " << toml_string(v) << "\n";
    out.close();
    if (!out) return make_error(ErrorCode::io, "cannot write " + (config / "config.toml").string());
    return ok();
  }

  std::unique_ptr<CliReader> reader() const override { return std::make_unique<CodexReader>(); }

 private:
  std::string name_ = "codex";
};

}  // namespace

std::unique_ptr<CliDialect> make_codex_dialect() { return std::make_unique<CodexDialect>(); }

}  // namespace loopr::llm
