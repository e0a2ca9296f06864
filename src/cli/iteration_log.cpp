#include "cli/iteration_log.hpp"

#include <sstream>

#include <loopr/core/text.hpp>

#include "cli/format.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {

using F = IterationFile;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string ensure_newline(std::string s) {
  if (!s.empty() && s.back() != '\n') s += '\n';
  return s;
}

// Everything in it is the model's or its commands' text: shown with its controls visible
// (`shown`, and the same for each string of a JSON value).
std::string seen(const json& value) { return dump(terminal_json(value)); }

void render_block(std::ostringstream& out, const TranscriptBlock& b, const Style& style) {
  using Kind = TranscriptBlock::Kind;
  switch (b.kind) {
    case Kind::text:
      out << ensure_newline(shown(b.text));
      break;
    case Kind::thinking:
      if (!b.text.empty()) out << style.dim("(thinking) " + shown(b.text)) << "\n";
      break;
    case Kind::redacted_thinking:
      out << style.dim("(redacted thinking)") << "\n";
      break;
    case Kind::tool_use:
      out << style.cyan("→ " + shown(b.name)) << " " << seen(b.input) << "\n";
      break;
    case Kind::tool_result:
      out << (b.is_error ? style.red("← error") : style.cyan("←")) << " "
          << ensure_newline(tool_result_text(terminal_json(b.content), -1));
      break;
    case Kind::other:
      out << (b.raw.is_object() ? style.dim(seen(b.raw)) : seen(b.raw)) << "\n";
      break;
  }
}

void render_entry(std::ostringstream& out, const TranscriptEntry& e, const Style& style) {
  switch (e.kind) {
    case TranscriptEntry::Kind::receipt:
      out << style.dim("model call: " + seen(e.receipt)) << "\n";
      return;
    case TranscriptEntry::Kind::raw:
      out << (e.value.is_string() ? shown(e.value.get<std::string>()) : seen(e.value)) << "\n";
      return;
    case TranscriptEntry::Kind::message:
      break;
  }
  out << style.bold("-- " + shown(e.role)) << "\n";
  if (e.text) out << ensure_newline(shown(*e.text));
  for (const auto& b : e.blocks) render_block(out, b, style);
}

json text_or_null(const IterationFileText& f) { return f.text ? json(*f.text) : json(nullptr); }

}  // namespace

IterationLog read_iteration_log(const RepoPaths& paths, const std::string& id, int n) {
  IterationLog log;
  log.files = read_iteration_files(paths, id, n, kIterationFileReadBytes);
  if (const auto& conv = log.files[F::conversation].text)
    log.conversation = parse_conversation(*conv);
  return log;
}

json iteration_log_json(const IterationLog& log) {
  json conversation = json::array();
  for (const auto& e : log.conversation) conversation.push_back(e.value);
  json out = {{"id", log.files.loop_id},
              {"iteration", log.files.n},
              {"prompt", text_or_null(log.files[F::prompt])},
              {"conversation", std::move(conversation)},
              {"validation_log", text_or_null(log.files[F::validation])},
              {"review", text_or_null(log.files[F::review])}};
  json cut = json::array();
  for (const auto& spec : kIterationFiles)
    if (log.files[spec.file].truncated) cut.push_back(spec.name);
  if (!cut.empty()) out["truncated"] = std::move(cut);
  return out;
}

std::string render_iteration_log(const IterationLog& log, const Style& style) {
  std::ostringstream out;
  auto section = [&](const char* what, F file) {
    const IterationFileText& f = log.files[file];
    out << "\n"
        << style.bold(std::string("== ") + what)
        << style.dim("  " + (log.files.dir / file_name(file)).string()) << "\n";
    if (file == F::conversation) {
      if (log.conversation.empty())
        out << style.dim(f.text ? std::string("(no ") + file_name(file) + ")" : f.problem) << "\n";
      for (const auto& e : log.conversation) render_entry(out, e, style);
    } else {
      out << (f.text ? ensure_newline(shown(*f.text)) : style.dim(f.problem) + "\n");
    }
    if (f.truncated) out << style.dim("(cut: the file is longer)") << "\n";
  };
  out << style.bold(log.files.loop_id + " iteration " + std::to_string(log.files.n)) << "\n";
  section("prompt", F::prompt);
  section("conversation", F::conversation);
  section("validation", F::validation);
  if (log.files[F::review].text) section("review", F::review);
  return out.str();
}

}  // namespace loopr::cli
