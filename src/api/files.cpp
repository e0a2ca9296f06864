// The codecs of a loop's files (loopr/api/files.hpp).
#include <loopr/api/files.hpp>

#include "json_read.hpp"

namespace loopr::api {
namespace {

using json = nlohmann::json;
using namespace read;

json text_or_null(const std::optional<std::string>& text) {
  return text ? json(*text) : json(nullptr);
}

std::optional<std::string> text_of(const json& j) {
  const json& t = sub(j, "text");
  if (!t.is_string()) return std::nullopt;
  return t.get<std::string>();
}

}  // namespace

json to_json(const FileView& f) {
  return json{{"path", f.path},
              {"text", text_or_null(f.text)},
              {"problem", f.problem},
              {"truncated", f.truncated},
              {"source", f.source}};
}

FileView file_view_from_json(const json& j) {
  FileView f;
  f.path = str(j, "path");
  f.text = text_of(j);
  f.problem = str(j, "problem");
  f.truncated = flag(j, "truncated");
  f.source = str(j, "source");
  return f;
}

json to_json(const DiffView& d) {
  return json{{"label", d.label},
              {"branch", d.diff.path},
              {"text", text_or_null(d.diff.text)},
              {"problem", d.diff.problem},
              {"truncated", d.diff.truncated}};
}

DiffView diff_view_from_json(const json& j) {
  DiffView d;
  d.label = str(j, "label");
  d.diff.path = str(j, "branch");
  d.diff.text = text_of(j);
  d.diff.problem = str(j, "problem");
  d.diff.truncated = flag(j, "truncated");
  return d;
}

json to_json(const IterationView& it) {
  json files = json::array();
  for (const auto& f : it.files)
    files.push_back({{"name", f.name},
                     {"text", text_or_null(f.text)},
                     {"truncated", f.truncated},
                     {"problem", f.problem}});
  return json{{"id", it.id}, {"n", it.n}, {"files", std::move(files)}};
}

IterationView iteration_view_from_json(const json& j) {
  IterationView it;
  it.id = str(j, "id");
  it.n = i32(j, "n");
  if (const json& files = sub(j, "files"); files.is_array())
    for (const auto& f : files) {
      if (!f.is_object()) continue;
      it.files.push_back({str(f, "name"), text_of(f), flag(f, "truncated"), str(f, "problem")});
    }
  return it;
}

}  // namespace loopr::api
