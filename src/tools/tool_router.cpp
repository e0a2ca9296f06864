// The router: checks a call's input against what the tool needs, resolves paths through the
// sandbox, and turns every failure into a ToolResult the model can read and act on.
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <loopr/core/embedded.hpp>
#include <loopr/core/process.hpp>
#include <loopr/core/text.hpp>
#include <loopr/tools/tool_router.hpp>

#include "tools/file_io.hpp"

namespace loopr::tools {

const std::vector<EmbeddedFile>& embedded_tool_schemas();

namespace fs = std::filesystem;

const std::vector<ToolDefinition>& tool_definitions() {
  static const std::vector<ToolDefinition> defs = [] {
    std::vector<ToolDefinition> out;
    for (const EmbeddedFile& f : embedded_tool_schemas()) {
      auto j = nlohmann::json::parse(f.content);  // our own files: a parse error is a build bug
      out.push_back({j.at("name").get<std::string>(), j.at("description").get<std::string>(),
                     j.at("input_schema")});
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
  }();
  return defs;
}

namespace {

ToolResult error_result(std::string message) { return {std::move(message), true}; }

// Reads a required string field, or says exactly what is missing.
std::optional<std::string> string_field(const nlohmann::json& input, const char* tool,
                                        const char* field, ToolResult& error,
                                        bool required = true) {
  if (!input.is_object() || !input.contains(field) || input[field].is_null()) {
    if (required) error = error_result(std::string(tool) + " needs `" + field + "` (a string)");
    return std::nullopt;
  }
  if (!input[field].is_string()) {
    error = error_result(std::string(tool) + ": `" + field + "` must be a string, got " +
                         input[field].type_name());
    return std::nullopt;
  }
  return input[field].get<std::string>();
}

std::optional<long long> int_field(const nlohmann::json& input, const char* tool, const char* field,
                                   ToolResult& error) {
  if (!input.is_object() || !input.contains(field) || input[field].is_null()) return std::nullopt;
  if (!input[field].is_number_integer() || input[field].get<long long>() < 1) {
    error =
        error_result(std::string(tool) + ": `" + field + "` must be a whole number of at least 1");
    return std::nullopt;
  }
  return input[field].get<long long>();
}

}  // namespace

ToolPolicy policy_for(LoopType type, const Config& config, const std::string& own_artifact) {
  ToolPolicy p;
  p.loop_type = to_string(type);
  p.own_artifact = own_artifact;
  p.writes_only_artifact = type != LoopType::code;
  for (const char* name : kToolNames) {
    std::string_view n = name;
    if (n == "run_command" && type != LoopType::code) continue;
    // A plan has no siblings to tell; its artifact is what its children read.
    if (n == "share_note" && type == LoopType::plan) continue;
    p.allowed.insert(name);
  }
  const auto& narrowed = config.loop(type).tools;
  if (!narrowed.empty()) {
    std::set<std::string> keep;
    for (const auto& name : narrowed)
      if (p.allowed.count(name)) keep.insert(name);
    p.allowed = std::move(keep);
  }
  return p;
}

ToolRouter::ToolRouter(Sandbox sandbox, RunnerSlots& slots, exec::Executor& executor,
                       ToolPolicy policy, ToolLimits limits)
    : sandbox_(std::move(sandbox)),
      slots_(slots),
      executor_(executor),
      policy_(std::move(policy)),
      limits_(limits) {}

std::vector<ToolDefinition> ToolRouter::definitions() const {
  std::vector<ToolDefinition> out;
  for (const auto& d : tool_definitions())
    if (policy_.allowed.count(d.name)) out.push_back(d);
  return out;
}

ToolRouter::Writes ToolRouter::writes() const {
  std::lock_guard<std::mutex> lock(writes_mutex_);
  return {std::vector<std::string>(written_.begin(), written_.end()), writes_unknown_};
}

void ToolRouter::note_write(const std::string& rel, bool done) {
  std::lock_guard<std::mutex> lock(writes_mutex_);
  written_.insert(rel);
  // A failed write may leave its temporary file behind: nothing tells where any more.
  if (!done) writes_unknown_ = true;
}

std::string ToolRouter::write_refusal(const std::string& given, const fs::path& resolved) const {
  std::string rel = sandbox_.relative(resolved);
  bool in_loopr = rel == ".loopr" || rel.starts_with(".loopr/");
  if (rel == policy_.own_artifact) return {};
  if (policy_.writes_only_artifact)
    return "refused path \"" + given + "\": a " + policy_.loop_type +
           " loop writes only its artifact `" + policy_.own_artifact + "`";
  if (in_loopr)
    return "refused path \"" + given +
           "\": .loopr/ belongs to loopr (its config, prompts and other loops' "
           "artifacts); write your changes elsewhere in the working tree";
  return {};
}

ToolResult ToolRouter::call(const ToolCall& call, const std::atomic<bool>* cancel) {
  // File contents and names in the worktree are bytes: the model (and the store, and a
  // terminal) get text.
  ToolResult result = route(call, cancel);
  result.content = valid_utf8(result.content);
  return result;
}

ToolResult ToolRouter::route(const ToolCall& call, const std::atomic<bool>* cancel) {
  try {
    if (!policy_.allowed.count(call.name)) {
      bool known = false;
      for (const auto& d : tool_definitions()) known = known || d.name == call.name;
      std::string have;
      for (const auto& name : policy_.allowed) have += (have.empty() ? "" : ", ") + name;
      if (!known)
        return error_result("unknown tool `" + call.name + "`; the tools you have are " + have);
      return error_result("`" + call.name + "` is not available to " + policy_.loop_type +
                          " loops" +
                          (call.name == "run_command" && policy_.writes_only_artifact
                               ? " (they only write their artifact; code loops run commands)"
                               : "") +
                          "; the tools you have are " + have);
    }
    if (!call.input.is_object())
      return error_result(call.name + ": the input must be a JSON object");
    if (call.name == "read_file") return read_file(call.input);
    if (call.name == "write_file") return write_file(call.input);
    if (call.name == "edit_file") return edit_file(call.input);
    if (call.name == "list_dir") return list_dir(call.input);
    if (call.name == "search") return search(call.input);
    if (call.name == "run_command") return run_command(call.input, cancel);
    if (call.name == "share_note" || call.name == "ask_user")
      return error_result(call.name + " works only inside a loop's conversation");
    return error_result("unknown tool `" + call.name + "`");
  } catch (const std::exception& e) {
    // A tool failure is the model's to read, never the engine's to crash on.
    return error_result(call.name + " failed: " + e.what());
  }
}

ToolResult ToolRouter::read_file(const nlohmann::json& input) {
  ToolResult err;
  auto path = string_field(input, "read_file", "path", err);
  if (!path) return err;
  auto offset = int_field(input, "read_file", "offset", err);
  if (err.is_error) return err;
  auto limit = int_field(input, "read_file", "limit", err);
  if (err.is_error) return err;
  auto resolved = sandbox_.resolve(*path);
  if (!resolved) return error_result(resolved.error().message);
  std::error_code ec;
  if (fs::is_directory(*resolved, ec))
    return error_result(*path + " is a folder; use list_dir to see what is in it");
  auto text = read_text_file(*resolved, limits_.write_max_bytes * 4);
  if (!text) return error_result(text.error().message);
  if (looks_binary(*text))
    return error_result(*path + " is a binary file (" + std::to_string(text->size()) +
                        " bytes); it cannot be shown as text");

  long long first = offset.value_or(1);
  long long count = limit.value_or(limits_.read_default_lines);
  std::istringstream lines(*text);
  std::string line, out;
  long long n = 0, shown_last = 0, total = 0;
  bool cut_by_bytes = false;
  while (std::getline(lines, line)) {
    ++n;
    if (n < first || n >= first + count || cut_by_bytes) continue;
    if (out.size() + line.size() + 1 > limits_.read_max_bytes) {
      cut_by_bytes = true;
      continue;
    }
    out += line;
    out += '\n';
    shown_last = n;
  }
  total = n;
  if (!text->empty() && text->back() != '\n' && !out.empty() && shown_last == total) out.pop_back();
  if (first > total && total > 0)
    return error_result(*path + " has only " + std::to_string(total) + " lines; offset " +
                        std::to_string(first) + " is past the end");
  if (first > 1 || shown_last < total) {
    out += "\n[showing lines " + std::to_string(first) + "-" + std::to_string(shown_last) + " of " +
           std::to_string(total) + "; pass offset and limit to read more]";
  }
  return {out, false};
}

ToolResult ToolRouter::write_file(const nlohmann::json& input) {
  ToolResult err;
  auto path = string_field(input, "write_file", "path", err);
  if (!path) return err;
  auto content = string_field(input, "write_file", "content", err);
  if (!content) return err;
  if (content->size() > limits_.write_max_bytes)
    return error_result("write_file: content of " + std::to_string(content->size()) +
                        " bytes is over the " + std::to_string(limits_.write_max_bytes) +
                        "-byte limit");
  auto resolved = sandbox_.resolve(*path);
  if (!resolved) return error_result(resolved.error().message);
  if (*resolved == sandbox_.root())
    return error_result("write_file needs a file path, not the working tree root");
  if (auto why = write_refusal(*path, *resolved); !why.empty()) return error_result(why);
  std::error_code ec;
  if (fs::is_directory(*resolved, ec))
    return error_result(*path + " is a folder; give a file path");
  bool existed = fs::exists(*resolved, ec);
  auto written = write_file_atomically(*resolved, *content);
  note_write(sandbox_.relative(*resolved), written.ok());
  if (!written) return error_result(written.error().message);
  return {std::string(existed ? "overwrote " : "created ") + sandbox_.relative(*resolved) + " (" +
              std::to_string(content->size()) + " bytes)",
          false};
}

ToolResult ToolRouter::edit_file(const nlohmann::json& input) {
  ToolResult err;
  auto path = string_field(input, "edit_file", "path", err);
  if (!path) return err;
  auto old_string = string_field(input, "edit_file", "old_string", err);
  if (!old_string) return err;
  auto new_string = string_field(input, "edit_file", "new_string", err);
  if (!new_string) return err;
  if (old_string->empty())
    return error_result("edit_file: old_string is empty; to create a file use write_file");
  auto resolved = sandbox_.resolve(*path);
  if (!resolved) return error_result(resolved.error().message);
  if (auto why = write_refusal(*path, *resolved); !why.empty()) return error_result(why);
  auto text = read_text_file(*resolved, limits_.write_max_bytes);
  if (!text) return error_result(text.error().message + " (to create a new file use write_file)");

  std::size_t count = 0, at = std::string::npos;
  for (std::size_t pos = text->find(*old_string); pos != std::string::npos;
       pos = text->find(*old_string, pos + old_string->size())) {
    if (count == 0) at = pos;
    ++count;
  }
  if (count == 0)
    return error_result("edit_file: old_string was not found in " + *path +
                        "; read the file and copy the exact text, including whitespace");
  if (count > 1)
    return error_result("edit_file: old_string occurs " + std::to_string(count) + " times in " +
                        *path + "; include more surrounding lines so it occurs exactly once");
  std::string updated = text->substr(0, at) + *new_string + text->substr(at + old_string->size());
  auto written = write_file_atomically(*resolved, updated);
  note_write(sandbox_.relative(*resolved), written.ok());
  if (!written) return error_result(written.error().message);
  return {"edited " + sandbox_.relative(*resolved) + " (1 replacement)", false};
}

ToolResult ToolRouter::list_dir(const nlohmann::json& input) {
  ToolResult err;
  auto path = string_field(input, "list_dir", "path", err, false);
  if (err.is_error) return err;
  auto resolved = sandbox_.resolve(path.value_or("."));
  if (!resolved) return error_result(resolved.error().message);
  std::error_code ec;
  if (!fs::is_directory(*resolved, ec))
    return error_result(path.value_or(".") + " is not a folder");
  std::vector<std::string> entries;
  for (const auto& entry :
       fs::directory_iterator(*resolved, fs::directory_options::skip_permission_denied, ec)) {
    std::string name = entry.path().filename().string();
    if (name == ".git") continue;
    bool dir = entry.is_directory(ec) && !entry.is_symlink(ec);
    entries.push_back(name + (dir ? "/" : ""));
  }
  if (ec) return error_result("cannot list " + path.value_or(".") + ": " + ec.message());
  std::sort(entries.begin(), entries.end());
  std::string out;
  int shown = 0;
  for (const auto& e : entries) {
    if (shown++ == limits_.list_max_entries) {
      out += "[" +
             std::to_string(entries.size() - static_cast<std::size_t>(limits_.list_max_entries)) +
             " more entries not shown]\n";
      break;
    }
    out += e + "\n";
  }
  if (entries.empty()) out = "(empty folder)\n";
  return {out, false};
}

ToolResult ToolRouter::run_command(const nlohmann::json& input, const std::atomic<bool>* cancel) {
  ToolResult err;
  auto command = string_field(input, "run_command", "command", err);
  if (!command) return err;
  auto timeout_s = int_field(input, "run_command", "timeout_s", err);
  if (err.is_error) return err;
  auto timeout =
      std::min(timeout_s ? std::chrono::seconds(*timeout_s) : limits_.command_default_timeout,
               limits_.command_max_timeout);
  exec::Command cmd = exec::Command::shell(*command, sandbox_.root());
  cmd.output_cap = limits_.command_output_cap;
  cmd.cancel = cancel;
  cmd.env = policy_.command_env;
  cmd.runner_class = slots_.classify(*command);
  auto lease = slots_.acquire(cmd.runner_class);
  // The iteration's own limit (iteration_max_runtime) cuts a longer command short.
  std::chrono::milliseconds allowed = timeout;
  const auto left = limits_.deadline ? std::chrono::duration_cast<std::chrono::milliseconds>(
                                           *limits_.deadline - std::chrono::steady_clock::now())
                                     : allowed;
  const bool by_deadline = limits_.deadline && (allowed.count() == 0 || left < allowed);  // 0: none
  if (by_deadline) allowed = left;
  if (by_deadline && allowed.count() <= 0)
    return error_result(
        "run_command did not run: the iteration's time limit (iteration_max_runtime) ran out");
  cmd.timeout = allowed;
  {
    std::lock_guard<std::mutex> lock(writes_mutex_);
    writes_unknown_ = true;  // a command may write anything anywhere in the worktree
  }
  ProcessResult r = executor_.run(cmd);
  std::ostringstream head;
  if (r.spawn_failed) return error_result("run_command could not start: " + r.output);
  if (r.timed_out && by_deadline) {
    head << "killed after " << allowed.count()
         << " ms: the iteration's time limit (iteration_max_runtime) ran out\n";
  } else if (r.timed_out) {
    head << "killed after " << timeout.count()
         << " s (timeout; pass a larger timeout_s if it needs longer)\n";
  } else if (r.cancelled) {
    head << "killed: the loop was stopped\n";
  } else if (r.term_signal) {
    head << "killed by signal " << r.term_signal << "\n";
  } else {
    head << "exit code " << r.exit_code << "\n";
  }
  return {head.str() + r.output, !r.succeeded()};
}

}  // namespace loopr::tools
