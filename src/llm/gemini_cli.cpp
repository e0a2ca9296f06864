// Gemini CLI as a provider (`llm.provider: gemini`, issue 46): `gemini -p … --output-format
// stream-json --approval-mode yolo` per call in the loop's worktree, run and confined by the
// agent-CLI client (agent_cli.hpp). Its JSON lines (init, message deltas, tool_use, tool_result,
// error, result with stats) become loopr's transcript and answer.
//
// Gemini CLI's own sandbox (a container) is off (GEMINI_SANDBOX=false): loopr's sandbox is the
// boundary. GEMINI_CLI_HOME is a private folder per run; of the person's ~/.gemini only the
// login (oauth_creds.json, google_accounts.json) is copied, never settings or extensions.
#include <fstream>

#include "llm/agent_cli.hpp"
#include "llm/json_util.hpp"

namespace loopr::llm {

using nlohmann::json;

namespace {

class GeminiReader final : public CliReader {
 public:
  void on_line(std::string_view line) override {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return;
    const std::string type = string_field(j, "type");
    if (type == "init") {
      session_id_ = string_field(j, "session_id");
      model_ = string_field(j, "model");
    } else if (type == "message" && string_field(j, "role") == "assistant") {
      // Deltas of one answer follow each other; a tool call in between starts the next.
      if (!in_text_) assistant().content.push_back(ContentBlock::make_text(""));
      in_text_ = true;
      assistant().content.back().text += string_field(j, "content");
    } else if (type == "tool_use") {
      in_text_ = false;
      ++tool_calls_;
      assistant().content.push_back(
          ContentBlock::make_tool_use(string_field(j, "tool_id"), string_field(j, "tool_name"),
                                      j.contains("parameters") ? j["parameters"] : json::object()));
    } else if (type == "tool_result") {
      in_text_ = false;
      std::string output = string_field(j, "output");
      const bool failed = string_field(j, "status") == "error";
      if (failed && j.contains("error")) output += string_field(j["error"], "message");
      transcript_.push_back(
          Message{Role::user,
                  {ContentBlock::make_tool_result(string_field(j, "tool_id"), output, failed)}});
    } else if (type == "error") {
      if (string_field(j, "severity") == "error") last_error_ = string_field(j, "message");
    } else if (type == "result") {
      result_ = std::move(j);
    }
  }

  Outcome finish(const ProcessResult& process, const Pricing& pricing) const override {
    (void)pricing;  // no cost from the CLI: the client prices the model
    if (auto e = cli_process_failure(process, "gemini",
                                     "install Gemini CLI (npm install -g @google/gemini-cli) or "
                                     "set llm.gemini.command"))
      return *e;
    if (!result_ || string_field(*result_, "status") != "success") {
      std::string detail = last_error_;
      if (result_ && result_->contains("error"))
        detail = string_field((*result_)["error"], "message");
      if (detail.empty()) detail = cli_stderr_tail(process);
      std::string how = !result_ ? "gemini exited with status " +
                                       std::to_string(process.exit_code) + " without a result"
                                 : "gemini reported an error";
      return classify(how, detail);
    }
    Response out;
    std::string text;
    // The answer is the text after the last tool call (earlier text narrated the work).
    for (const auto& m : transcript_)
      for (const auto& b : m.content)
        if (b.type == ContentBlock::Type::text) text = b.text;
    out.content.push_back(ContentBlock::make_text(text));
    out.stop_reason = StopReason::end_turn;
    out.stop_reason_text = "success";
    out.model = model_;
    out.id = session_id_;
    out.request_id = session_id_;
    out.num_turns = 1 + tool_calls_;
    if (result_->contains("stats")) {
      const json& s = (*result_)["stats"];
      std::int64_t input = 0, cached = 0;
      read_count(s, "input_tokens", input);
      read_count(s, "cached", cached);
      read_count(s, "output_tokens", out.usage.output_tokens);
      out.usage.input_tokens = input - cached;  // input_tokens counts the cached part too
      out.usage.cache_read_tokens = cached;
    }
    out.transcript = transcript_;
    return out;
  }

  std::string session_id() const override { return session_id_; }

 private:
  static LlmError classify(const std::string& head, const std::string& detail) {
    std::string text = head + (detail.empty() ? "" : ": " + detail);
    auto has = [&](const char* s) { return detail.find(s) != std::string::npos; };
    if (has("401") || has("API key not valid") || has("UNAUTHENTICATED") || has("403"))
      return cli_error(ErrorKind::auth, false,
                       "GEMINI_API_KEY (or the gemini login) is missing or was refused: " + detail);
    if (has("429") || has("RESOURCE_EXHAUSTED") || has("Quota"))
      return cli_error(ErrorKind::rate_limited, true, text);
    if (has("500") || has("503") || has("UNAVAILABLE") || has("INTERNAL"))
      return cli_error(ErrorKind::server, true, text);
    return cli_error(ErrorKind::process, false, text);
  }

  Message& assistant() {
    if (transcript_.empty() || transcript_.back().role != Role::assistant)
      transcript_.push_back(Message{Role::assistant, {}});
    return transcript_.back();
  }

  std::string session_id_, model_, last_error_;
  std::vector<Message> transcript_;
  std::optional<json> result_;
  int tool_calls_ = 0;
  bool in_text_ = false;
};

class GeminiDialect final : public CliDialect {
 public:
  const std::string& provider() const override { return name_; }
  std::string runner_class() const override { return "loopr-gemini-cli"; }

  ProcessSpec spec(const Request& request, const ClaudeCodeSettings& s) const override {
    // No flag appends to the CLI's system prompt (GEMINI_SYSTEM_MD replaces it whole): loopr's
    // system text leads the prompt.
    std::string prompt = cli_prompt(request);
    if (!request.system.empty()) prompt = request.system + "\n\n" + prompt;
    ProcessSpec spec;
    spec.argv = {s.command,     "--prompt",        prompt, "--output-format",
                 "stream-json", "--approval-mode", "yolo", "--skip-trust"};
    std::string model = request.model.empty() ? s.model : request.model;
    if (!model.empty()) spec.argv.insert(spec.argv.end(), {"--model", model});
    spec.env_set = s.env;
    spec.env_set["GEMINI_SANDBOX"] = "false";
    spec.env_set["GEMINI_CLI_TRUST_WORKSPACE"] = "true";
    spec.env_set["GEMINI_CLI_NO_RELAUNCH"] = "true";  // one process: its group is killed whole
    spec.env_set["GEMINI_CLI_CUSTOM_HEADERS"] =
        "x-loopr-loop-id: " + request.loop_id + ", x-loopr-loop-type: " + request.loop_type;
    return spec;
  }

  Result<std::filesystem::path> private_config(
      const std::filesystem::path& root, const Request& request, const ClaudeCodeSettings& s,
      std::map<std::string, std::string>& env) const override {
    LOOPR_ASSIGN(std::filesystem::path dir,
                 fresh_private_dir(root, request.loop_id, "the gemini CLI's GEMINI_CLI_HOME"));
    std::filesystem::path conf = dir / ".gemini";
    std::error_code ec;
    std::filesystem::create_directories(conf, ec);
    const bool key = s.env.count("GEMINI_API_KEY") || s.env.count("GOOGLE_API_KEY");
    // On a login, the client passes the access token alone (GOOGLE_CLOUD_ACCESS_TOKEN): no file.
    json settings = {
        {"general", {{"disableAutoUpdate", true}, {"disableUpdateNag", true}}},
        {"telemetry", {{"enabled", false}}},
        {"privacy", {{"usageStatisticsEnabled", false}}},
        {"tools", {{"sandbox", false}}},
        {"security",
         {{"auth",
           {{"selectedType", key || s.env.count("GOOGLE_GEMINI_BASE_URL") ? "gemini-api-key"
                                                                          : "oauth-personal"}}}}}};
    std::ofstream out(conf / "settings.json", std::ios::trunc);
    out << settings.dump(2) << "\n";
    out.close();
    if (!out) return make_error(ErrorCode::io, "cannot write " + (conf / "settings.json").string());
    env["GEMINI_CLI_HOME"] = dir.string();
    return dir;
  }

  // `mcpServers` of the private settings.json; `trust`: no confirmation (loopr's sandbox and
  // the daemon's checks are the boundary, as for the CLI's own tools under yolo).
  Result<void> register_mcp(const std::filesystem::path& config, const McpServerEntry& server,
                            std::vector<std::string>& /*argv*/) const override {
    std::filesystem::path path = config / ".gemini/settings.json";
    std::ifstream in(path);
    json settings = json::parse(in, nullptr, false);
    in.close();
    if (!settings.is_object()) settings = json::object();
    json env = json::object();
    for (const auto& [k, v] : server.env) env[k] = v;
    // Gemini's headless mode drops every tool named `ask_user` (its own, and an MCP server's
    // of that name), so loopr's is shown as `ask_person` (mcp-serve maps the call back).
    json args = server.args;
    args.push_back("--alias");
    args.push_back("ask_user=ask_person");
    settings["mcpServers"]["loopr"] = {{"command", server.command},
                                       {"args", args},
                                       {"env", env},
                                       {"trust", true},
                                       {"timeout", 120000}};
    std::ofstream out(path, std::ios::trunc);
    out << settings.dump(2) << "\n";
    out.close();
    if (!out) return make_error(ErrorCode::io, "cannot write " + path.string());
    return ok();
  }

  std::unique_ptr<CliReader> reader() const override { return std::make_unique<GeminiReader>(); }

 private:
  std::string name_ = "gemini";
};

}  // namespace

std::unique_ptr<CliDialect> make_gemini_dialect() { return std::make_unique<GeminiDialect>(); }

}  // namespace loopr::llm
