// git/checkout_filters.hpp. The built-in filters of libgit2 are `crlf` (attributes text, eol,
// crlf, or core.autocrlf) and `ident` (attribute ident); other drivers come from attributes too.
// With no attribute source and no autocrlf, none applies, and the checkout writes the blobs as
// they are: what it writes with the filters on.
#include "git/checkout_filters.hpp"

#include <filesystem>
#include <string>
#include <string_view>

#include "git/libgit2.hpp"

namespace loopr::git::detail {

namespace {

bool present(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::exists(p, ec) || ec;  // unsure counts as there
}

// `file` in any folder of libgit2's search path for that config level.
bool in_search_path(int level, std::string_view file) {
  auto files = search_path_files(level, file);
  if (!files) return true;  // unsure counts as there
  for (const auto& path : *files)
    if (present(path)) return true;
  return false;
}

bool config_may_filter(git_repository* repo) {
  git_config* raw = nullptr;
  if (git_repository_config_snapshot(&raw, repo) != 0) return true;
  ConfigPtr config(raw);
  Buf value;
  int rc = git_config_get_string_buf(&value.buf, config.get(), "core.attributesFile");
  if (rc != GIT_ENOTFOUND) return true;  // set (or unreadable): leave it to libgit2
  int autocrlf = 0;
  rc = git_config_get_bool(&autocrlf, config.get(), "core.autocrlf");
  if (rc == GIT_ENOTFOUND) return false;
  return rc != 0 || autocrlf != 0;  // true, or "input" (not a bool)
}

int stop_at_attributes(const char*, const git_tree_entry* entry, void* found) {
  if (std::string_view(git_tree_entry_name(entry)) != ".gitattributes") return 0;
  *static_cast<bool*>(found) = true;
  return -1;
}

}  // namespace

bool checkout_may_filter(git_repository* repo, const git_tree* tree) {
  if (config_may_filter(repo)) return true;
  for (const char* dir : {git_repository_commondir(repo), git_repository_path(repo)})
    if (dir && present(std::filesystem::path(dir) / "info" / "attributes")) return true;
  if (in_search_path(GIT_CONFIG_LEVEL_XDG, "attributes")) return true;
  if (in_search_path(GIT_CONFIG_LEVEL_SYSTEM, "gitattributes")) return true;
  bool found = false;
  int rc = git_tree_walk(tree, GIT_TREEWALK_PRE, stop_at_attributes, &found);
  return found || (rc != 0 && rc != GIT_EUSER);
}

}  // namespace loopr::git::detail
