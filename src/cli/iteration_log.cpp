#include "cli/iteration_log.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <loopr/core/text.hpp>

#include "cli/format.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {

std::optional<std::string> slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string ensure_newline(std::string s) {
  if (!s.empty() && s.back() != '\n') s += '\n';
  return s;
}

// A tool_result's content: a string, or blocks whose text is joined.
std::string result_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) return content.is_null() ? "" : dump(content);
  std::string out;
  for (const auto& b : content) {
    if (b.is_object() && b.value("type", "") == "text")
      out += b.value("text", "");
    else
      out += dump(b);
    out += '\n';
  }
  return out;
}

void render_block(std::ostringstream& out, const json& b, const Style& style) {
  if (!b.is_object()) {
    out << dump(b) << "\n";
    return;
  }
  std::string type = b.value("type", "");
  if (type == "text") {
    out << ensure_newline(b.value("text", ""));
  } else if (type == "thinking") {
    std::string t = b.value("thinking", "");
    if (!t.empty()) out << style.dim("(thinking) " + t) << "\n";
  } else if (type == "redacted_thinking") {
    out << style.dim("(redacted thinking)") << "\n";
  } else if (type == "tool_use") {
    out << style.cyan("→ " + b.value("name", std::string("?"))) << " "
        << dump(b.value("input", json::object())) << "\n";
  } else if (type == "tool_result") {
    bool error = b.value("is_error", false);
    out << (error ? style.red("← error") : style.cyan("←")) << " "
        << ensure_newline(result_text(b.contains("content") ? b["content"] : json()));
  } else {
    out << style.dim(dump(b)) << "\n";
  }
}

}  // namespace

IterationLog read_iteration_log(const RepoPaths& paths, const std::string& id, int n) {
  IterationLog log;
  log.id = id;
  log.n = n;
  log.dir = paths.iteration_dir(id, n);
  log.prompt = slurp(log.dir / "prompt.md");
  log.validation_log = slurp(log.dir / "validation.log");
  log.review = slurp(log.dir / "review.md");
  if (auto conv = slurp(log.dir / "conversation.jsonl")) {
    std::istringstream in(*conv);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      json j = json::parse(line, nullptr, false);
      log.conversation.push_back(j.is_discarded() ? json(line) : j);
    }
  }
  return log;
}

json iteration_log_json(const IterationLog& log) {
  return {{"id", log.id},
          {"iteration", log.n},
          {"prompt", log.prompt ? json(*log.prompt) : json(nullptr)},
          {"conversation", log.conversation},
          {"validation_log", log.validation_log ? json(*log.validation_log) : json(nullptr)},
          {"review", log.review ? json(*log.review) : json(nullptr)}};
}

std::string render_iteration_log(const IterationLog& raw, const Style& style) {
  // Everything in it is the model's or its commands' text: shown with its controls visible.
  IterationLog log = raw;
  if (log.prompt) log.prompt = shown(*log.prompt);
  if (log.validation_log) log.validation_log = shown(*log.validation_log);
  if (log.review) log.review = shown(*log.review);  // the reviewer's words, quoting the diff
  for (auto& m : log.conversation) m = terminal_json(m);
  std::ostringstream out;
  auto heading = [&](const std::string& what, const std::string& file) {
    out << "\n" << style.bold("== " + what) << style.dim("  " + (log.dir / file).string()) << "\n";
  };
  out << style.bold(log.id + " iteration " + std::to_string(log.n)) << "\n";
  heading("prompt", "prompt.md");
  out << (log.prompt ? ensure_newline(*log.prompt) : style.dim("(no prompt.md)") + "\n");
  heading("conversation", "conversation.jsonl");
  if (log.conversation.empty()) out << style.dim("(no conversation.jsonl)") << "\n";
  for (const auto& m : log.conversation) {
    if (m.is_object() && m.contains("receipt")) {
      out << style.dim("model call: " + dump(m["receipt"])) << "\n";
      continue;
    }
    if (!m.is_object() || !m.contains("role")) {
      out << (m.is_string() ? m.get<std::string>() : dump(m)) << "\n";
      continue;
    }
    out << style.bold("-- " + m.value("role", std::string("?"))) << "\n";
    const json& content = m.contains("content") ? m["content"] : json();
    if (content.is_string())
      out << ensure_newline(content.get<std::string>());
    else if (content.is_array())
      for (const auto& b : content) render_block(out, b, style);
  }
  heading("validation", "validation.log");
  out << (log.validation_log ? ensure_newline(*log.validation_log)
                             : style.dim("(no validation.log)") + "\n");
  if (log.review) {
    heading("review", "review.md");
    out << ensure_newline(*log.review);
  }
  return out.str();
}

}  // namespace loopr::cli
