// search{pattern, path?}: RE2 over the text files under a folder, capped.
#include <re2/re2.h>

#include <fstream>

#include <loopr/tools/tool_router.hpp>

#include "tools/file_io.hpp"

namespace loopr::tools {
namespace fs = std::filesystem;

ToolResult ToolRouter::search(const nlohmann::json& input) {
  if (!input.contains("pattern") || !input["pattern"].is_string())
    return {"search needs `pattern` (a string, RE2 syntax)", true};
  std::string pattern = input["pattern"].get<std::string>();
  std::string where = ".";
  if (input.contains("path") && !input["path"].is_null()) {
    if (!input["path"].is_string()) return {"search: `path` must be a string", true};
    where = input["path"].get<std::string>();
  }
  re2::RE2 re(pattern, re2::RE2::Quiet);
  if (!re.ok()) return {"search: bad pattern: " + re.error() + " (RE2 syntax: no lookaround or backreferences)", true};
  auto resolved = sandbox_.resolve(where);
  if (!resolved) return {resolved.error().message, true};

  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_regular_file(*resolved, ec)) {
    files.push_back(*resolved);
  } else if (fs::is_directory(*resolved, ec)) {
    fs::recursive_directory_iterator it(*resolved, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (it->path().filename() == ".git") {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file(ec) && !it->is_symlink(ec)) files.push_back(it->path());
    }
  } else {
    return {where + " does not exist", true};
  }
  std::sort(files.begin(), files.end());

  std::string out;
  int results = 0;
  bool capped = false;
  for (const auto& file : files) {
    if (capped) break;
    auto text = read_text_file(file, limits_.search_max_file_bytes);
    if (!text || looks_binary(*text)) continue;
    std::string rel = sandbox_.relative(file);
    std::size_t start = 0;
    int line_no = 0;
    while (start <= text->size()) {
      std::size_t end = text->find('\n', start);
      if (end == std::string::npos) end = text->size();
      ++line_no;
      std::string_view line(text->data() + start, end - start);
      if (re2::RE2::PartialMatch(line, re)) {
        if (results == limits_.search_max_results) {
          capped = true;
          break;
        }
        ++results;
        out += rel + ":" + std::to_string(line_no) + ": " + std::string(line.substr(0, 300)) +
               (line.size() > 300 ? " […]" : "") + "\n";
      }
      if (end == text->size()) break;
      start = end + 1;
    }
  }
  if (results == 0) return {"no matches for " + pattern + " in " + where, false};
  if (capped) out += "[results capped at " + std::to_string(limits_.search_max_results) + "; narrow the pattern or the path]\n";
  return {out, false};
}

}  // namespace loopr::tools
