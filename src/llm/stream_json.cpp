#include "llm/stream_json.hpp"

#include <spdlog/spdlog.h>

#include "llm/agent_cli.hpp"
#include "llm/json_util.hpp"
#include "llm/wire.hpp"

namespace loopr::llm {

using nlohmann::json;

namespace {

const char* kKeyEnv = "ANTHROPIC_API_KEY";

/// tool_result content is a string or a list of blocks; the transcript keeps the text.
std::string tool_result_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const auto& part : content) out += string_field(part, "text");
  return out;
}

ContentBlock transcript_block(const json& j) {
  if (string_field(j, "type") != "tool_result") return anthropic_block_from_json(j);
  ContentBlock b = ContentBlock::make_tool_result(
      string_field(j, "tool_use_id"),
      tool_result_text(j.contains("content") ? j["content"] : json()),
      j.contains("is_error") && j["is_error"].is_boolean() && j["is_error"].get<bool>());
  b.raw = j;
  return b;
}

/// The CLI's own retries are used up when it reports an API status; loopr's policy then
/// decides as it would for its own HTTP call (WIRE.md §1 table).
LlmError api_status_error(int status, const std::string& detail) {
  std::string tail = detail.empty() ? "" : ": " + detail;
  if (status == 401)
    return cli_error(ErrorKind::auth, false,
                         std::string(kKeyEnv) + " is missing or was refused (401)" + tail);
  if (status == 429)
    return cli_error(ErrorKind::rate_limited, true, "claude: rate limit reached (429)" + tail);
  if (status == 529)
    return cli_error(ErrorKind::overloaded, true, "claude: the API is overloaded (529)" + tail);
  if (status == 408 || status == 409 || status >= 500)
    return cli_error(ErrorKind::server, true,
                         "claude: API error (" + std::to_string(status) + ")" + tail);
  if (status == 402)
    return cli_error(ErrorKind::billing, false, "claude: billing problem (402)" + tail);
  if (status == 403)
    return cli_error(ErrorKind::permission, false, "claude: permission denied (403)" + tail);
  return cli_error(
      ErrorKind::invalid_request, false,
      "claude: the API refused the request (" + std::to_string(status) + ")" + tail);
}

/// `assistant.error` when no status is known (WIRE.md §3 lists the values).
std::optional<LlmError> assistant_error(const std::string& code, const std::string& detail) {
  std::string tail = detail.empty() ? "" : ": " + detail;
  if (code == "authentication_failed")
    return cli_error(ErrorKind::auth, false,
                         std::string(kKeyEnv) + " is missing or was refused" + tail);
  if (code == "billing_error")
    return cli_error(ErrorKind::billing, false, "claude: billing problem" + tail);
  if (code == "rate_limit")
    return cli_error(ErrorKind::rate_limited, true, "claude: rate limit reached" + tail);
  if (code == "overloaded")
    return cli_error(ErrorKind::overloaded, true, "claude: the API is overloaded" + tail);
  if (code == "server_error")
    return cli_error(ErrorKind::server, true, "claude: API server error" + tail);
  if (code == "model_not_found")
    return cli_error(ErrorKind::not_found, false,
                         "claude: the model was not found; check llm.model" + tail);
  return std::nullopt;
}

std::string stderr_tail(const ProcessResult& p) {
  std::string s = p.error_output.empty() ? p.output : p.error_output;
  constexpr std::size_t kTail = 500;
  if (s.size() > kTail) s = "…" + s.substr(s.size() - kTail);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

void StreamJsonReader::on_line(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  auto j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    spdlog::debug("claude: skipping a line that is not JSON: {}", line.substr(0, 200));
    return;
  }
  std::string type = string_field(j, "type");
  std::string subtype = string_field(j, "subtype");
  if (auto sid = string_field(j, "session_id"); !sid.empty()) session_id_ = sid;
  if (type == "system" && subtype == "init") {
    model_ = string_field(j, "model");
  } else if (type == "system" && subtype == "api_retry") {
    ++api_retries_;
    std::int64_t attempt = 0, delay = 0;
    read_count(j, "attempt", attempt);
    read_count(j, "retry_delay_ms", delay);
    spdlog::info("claude: API retry {} ({} {}), next in {} ms", attempt,
                 j.contains("error_status") ? j["error_status"].dump() : "?",
                 string_field(j, "error"), delay);
  } else if (type == "assistant" && j.contains("message")) {
    if (auto err = string_field(j, "error"); !err.empty()) assistant_error_ = err;
    add_turn(Role::assistant, j["message"]);
  } else if (type == "user" && j.contains("message")) {
    add_turn(Role::user, j["message"]);
  } else if (type == "result") {
    result_ = std::move(j);
  }  // stream_event, rate_limit_event and future types: nothing loopr needs
}

void StreamJsonReader::add_turn(Role role, const json& message) {
  if (!message.is_object() || !message.contains("content")) return;
  const json& content = message["content"];
  std::string id = string_field(message, "id");
  // The CLI prints one assistant line per content block; lines sharing a message id are one turn.
  bool same_turn = role == Role::assistant && !id.empty() && id == last_assistant_id_ &&
                   !transcript_.empty() && transcript_.back().role == Role::assistant;
  if (!same_turn) transcript_.push_back(Message{role, {}});
  last_assistant_id_ = role == Role::assistant ? id : std::string();
  if (content.is_string()) {
    transcript_.back().content.push_back(ContentBlock::make_text(content.get<std::string>()));
  } else if (content.is_array()) {
    for (const auto& block : content) transcript_.back().content.push_back(transcript_block(block));
  }
}

Outcome StreamJsonReader::finish(const ProcessResult& process, const Pricing& pricing) const {
  if (process.spawn_failed)
    return cli_error(ErrorKind::process, false,
                         "cannot run the claude CLI (" + stderr_tail(process) +
                             "); install Claude Code or set llm.claude_code.command");
  if (process.cancelled) return cli_error(ErrorKind::cancelled, false, "claude: cancelled");
  // A timed-out session already spent the iteration's time: retrying it as-is is not the fix.
  if (process.timed_out)
    return cli_error(ErrorKind::timeout, false,
                         "claude ran past its timeout of " +
                             std::to_string(process.duration.count()) +
                             " ms and was killed (with its whole process group)");
  if (!result_) {
    std::string how = process.term_signal != 0
                          ? "was killed by signal " + std::to_string(process.term_signal)
                          : "exited with status " + std::to_string(process.exit_code);
    std::string tail = stderr_tail(process);
    if (auto e = assistant_error(assistant_error_, "the CLI " + how + " without a result"))
      return *e;
    return cli_error(
        ErrorKind::process, false,
        "claude " + how + " without a result line" + (tail.empty() ? "" : ": " + tail));
  }

  const json& r = *result_;
  std::string subtype = string_field(r, "subtype");
  bool is_error = r.contains("is_error") && r["is_error"].is_boolean() && r["is_error"].get<bool>();
  if (is_error || (subtype != "success" && !subtype.empty())) {
    std::string detail = string_field(r, "result");
    if (r.contains("errors") && r["errors"].is_array())
      for (const auto& e : r["errors"])
        detail += (detail.empty() ? "" : "; ") + (e.is_string() ? e.get<std::string>() : e.dump());
    if (auto it = r.find("api_error_status"); it != r.end() && it->is_number_integer())
      return api_status_error(it->get<int>(), detail);
    if (auto e = assistant_error(assistant_error_, detail)) return *e;
    if (subtype == "error_max_turns")
      return cli_error(ErrorKind::process, false,
                           "claude stopped at its turn limit (llm.claude_code.max_turns)" +
                               (detail.empty() ? "" : ": " + detail));
    return cli_error(ErrorKind::process, false,
                         "claude reported an error (" + (subtype.empty() ? "is_error" : subtype) +
                             ")" + (detail.empty() ? "" : ": " + detail));
  }

  Response out;
  out.content.push_back(ContentBlock::make_text(string_field(r, "result")));
  out.stop_reason_text = string_field(r, "stop_reason");
  out.stop_reason =
      out.stop_reason_text.empty() ? StopReason::end_turn : parse_stop_reason(out.stop_reason_text);
  out.model = model_;
  if (out.model.empty() && r.contains("modelUsage") && r["modelUsage"].is_object() &&
      !r["modelUsage"].empty())
    out.model = r["modelUsage"].begin().key();
  out.id = session_id_;
  out.request_id = session_id_;  // what `claude --resume` and the CLI's own logs know it by
  if (auto it = r.find("num_turns"); it != r.end() && it->is_number_integer())
    out.num_turns = it->get<int>();
  if (r.contains("usage")) {
    const json& u = r["usage"];
    read_count(u, "input_tokens", out.usage.input_tokens);
    read_count(u, "output_tokens", out.usage.output_tokens);
    read_count(u, "cache_read_input_tokens", out.usage.cache_read_tokens);
    read_count(u, "cache_creation_input_tokens", out.usage.cache_write_tokens);
  }
  if (auto it = r.find("total_cost_usd"); it != r.end() && it->is_number())
    out.usage.cost_usd = it->get<double>();
  else
    out.usage.cost_usd = pricing.cost_usd(out.model, out.usage);
  out.transcript = transcript_;
  if (process.exit_code != 0)
    spdlog::warn("claude gave a result but exited with status {}", process.exit_code);
  return out;
}

}  // namespace loopr::llm
