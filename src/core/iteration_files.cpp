// The iteration files: their names, the one reader, the writer and the transcript parser
// (core/iteration_files.hpp).
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <loopr/core/fd.hpp>
#include <loopr/core/file_read.hpp>
#include <loopr/core/iteration_files.hpp>
#include <loopr/core/text.hpp>

namespace loopr {

using nlohmann::json;

namespace {

/// One name in a folder: no separator, not `.` or `..` (an id from a URL names nothing else).
bool one_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

/// `name` in the folder `dir`, up to `max_bytes`, through core/file_read.hpp: only a regular
/// file, never through a symlink, never waiting on a FIFO (the model's commands may leave either
/// where loopr reads).
IterationFileText read_in(int dir, const char* name, std::size_t max_bytes) {
  IterationFileText f;
  FileBytes read = read_file_at(dir, name, max_bytes, name);
  if (!read.bytes) {
    f.problem = read.why == FileProblem::refused
                    ? std::string("(") + name + " is not a regular file: not shown)"
                    : std::string("(no ") + name + ")";
    return f;
  }
  f.truncated = read.truncated;
  f.text = valid_utf8(*read.bytes);
  return f;
}

/// `j[key]` when it is a string, `fallback` when absent; nullopt when it is something else.
std::optional<std::string> string_at(const json& j, const char* key, std::string fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

TranscriptBlock block_of(const json& b) {
  TranscriptBlock out;
  out.raw = b;
  if (!b.is_object()) return out;
  const auto type = string_at(b, "type", "");
  if (!type) return out;
  using Kind = TranscriptBlock::Kind;
  if (*type == "text" || *type == "thinking") {
    auto text = string_at(b, type->c_str(), "");
    if (!text) return out;
    out.kind = *type == "text" ? Kind::text : Kind::thinking;
    out.text = std::move(*text);
  } else if (*type == "redacted_thinking") {
    out.kind = Kind::redacted_thinking;
  } else if (*type == "tool_use") {
    auto name = string_at(b, "name", "?");
    if (!name) return out;
    out.kind = Kind::tool_use;
    out.name = std::move(*name);
    out.input = b.contains("input") ? b["input"] : json::object();
  } else if (*type == "tool_result") {
    auto error = b.find("is_error");
    if (error != b.end() && !error->is_boolean()) return out;
    out.kind = Kind::tool_result;
    out.is_error = error != b.end() && error->get<bool>();
    out.content = b.contains("content") ? b["content"] : json();
  }
  return out;
}

TranscriptEntry entry_of(std::string line) {
  TranscriptEntry e;
  json j = json::parse(line, nullptr, false);
  e.value = j.is_discarded() ? json(line) : std::move(j);
  e.line = std::move(line);
  const json& v = e.value;
  if (v.is_object() && v.contains("receipt")) {
    e.kind = TranscriptEntry::Kind::receipt;
    e.receipt = v["receipt"];
    return e;
  }
  if (!v.is_object() || !v.contains("role") || !v["role"].is_string()) return e;
  e.kind = TranscriptEntry::Kind::message;
  e.role = v["role"].get<std::string>();
  const json& content = v.contains("content") ? v["content"] : json();
  if (content.is_string()) e.text = content.get<std::string>();
  if (content.is_array())
    for (const auto& b : content) e.blocks.push_back(block_of(b));
  return e;
}

}  // namespace

const char* file_name(IterationFile file) {
  for (const auto& spec : kIterationFiles)
    if (spec.file == file) return spec.name;
  return "";
}

IterationRead read_iteration_files(const RepoPaths& paths, const std::string& loop_id, int n,
                                   std::size_t max_bytes) {
  IterationRead r;
  r.loop_id = loop_id;
  r.n = n;
  r.dir = paths.iteration_dir(loop_id, n);
  Fd dir(one_name(loop_id) ? ::open(r.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                           : -1);
  for (const auto& spec : kIterationFiles)
    r.files[static_cast<std::size_t>(spec.file)] = read_in(dir.get(), spec.name, max_bytes);
  return r;
}

void write_iteration_file(const RepoPaths& paths, const std::string& loop_id, int n,
                          IterationFile file, std::string_view content) {
  const auto path = paths.iteration_dir(loop_id, n) / file_name(file);
  constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  // The iteration's first file makes its folder; the others open at once (no stat of each
  // folder on the way: these are written on every iteration).
  Fd fd(::open(path.c_str(), kFlags, 0644));
  std::error_code ec;
  if (fd.get() < 0 && errno == ENOENT) {
    std::filesystem::create_directories(path.parent_path(), ec);
    fd.reset(::open(path.c_str(), kFlags, 0644));
  }
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    // Something else is at the name (a symlink, a FIFO): loopr's file replaces it.
    fd.reset();
    ::unlink(path.c_str());
    fd.reset(::open(path.c_str(), kFlags | O_EXCL, 0644));
  }
  std::size_t done = 0;
  while (fd.get() >= 0 && done < content.size()) {
    const ssize_t put = ::write(fd.get(), content.data() + done, content.size() - done);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) break;
    done += static_cast<std::size_t>(put);
  }
  if (fd.get() < 0 || done < content.size() || ec)
    spdlog::warn("could not write {} of {} iteration {}", file_name(file), loop_id, n);
}

std::vector<TranscriptEntry> parse_conversation(std::string_view jsonl) {
  std::vector<TranscriptEntry> out;
  std::size_t pos = 0;
  while (pos < jsonl.size()) {
    std::size_t nl = jsonl.find('\n', pos);
    if (nl == std::string_view::npos) nl = jsonl.size();
    if (nl > pos) out.push_back(entry_of(std::string(jsonl.substr(pos, nl - pos))));
    pos = nl + 1;
  }
  return out;
}

std::string tool_result_text(const json& content, int indent) {
  auto dump = [indent](const json& j) {
    return j.dump(indent, ' ', false, json::error_handler_t::replace);
  };
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) return content.is_null() ? "" : dump(content);
  std::string out;
  for (const auto& b : content) {
    const bool text = b.is_object() && b.contains("type") && b["type"] == "text" &&
                      (!b.contains("text") || b["text"].is_string());
    out += text ? b.value("text", "") : dump(b);
    out += '\n';
  }
  return out;
}

}  // namespace loopr
