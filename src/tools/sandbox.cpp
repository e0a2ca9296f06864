// Path resolution is done twice on purpose: lexically first (cheap, clear messages for `..`,
// absolute paths, NUL, `.git`), then through the file system (symlinks, including chains and
// dangling links whose target would be created outside the worktree).
#include <loopr/tools/sandbox.hpp>

namespace loopr::tools {
namespace fs = std::filesystem;

namespace {

Error refuse(std::string_view path, const std::string& why) {
  return make_error(ErrorCode::invalid_argument,
                    "refused path \"" + std::string(path) + "\": " + why);
}

bool inside(const fs::path& p, const fs::path& root, fs::path* rel_out) {
  fs::path rel = p.lexically_relative(root);
  if (rel.empty()) return false;
  auto first = rel.begin();
  if (first != rel.end() && *first == "..") return false;
  if (rel_out) *rel_out = rel;
  return true;
}

}  // namespace

Sandbox::Sandbox(const fs::path& root) {
  std::error_code ec;
  root_ = fs::canonical(root, ec);
  if (ec) root_ = fs::absolute(root).lexically_normal();
}

Result<fs::path> Sandbox::resolve(std::string_view path) const {
  if (path.find('\0') != std::string_view::npos)
    return refuse("(with NUL)", "the path contains a NUL byte");
  if (path.empty()) return refuse(path, "the path is empty (use \".\" for the working tree root)");
  if (path.front() == '/' || path.front() == '~')
    return refuse(
        path, "absolute paths are not allowed; give the path relative to the working tree root");

  fs::path lexical;
  int depth = 0;
  for (const auto& part : fs::path(path)) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (depth == 0) return refuse(path, "it leaves the working tree; stay inside it");
      lexical = lexical.parent_path();
      --depth;
      continue;
    }
    if (part == ".git") return refuse(path, "the .git folder is managed by loopr, not by tools");
    lexical /= part;
    ++depth;
  }

  std::error_code ec;
  fs::path p = fs::weakly_canonical(root_ / lexical, ec);
  if (ec) return refuse(path, "it cannot be resolved: " + ec.message());
  // weakly_canonical leaves a dangling symlink as is; follow it, since writing to it would
  // create its target wherever it points.
  for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    if (hops > 40) return refuse(path, "too many levels of symbolic links");
    fs::path target = fs::read_symlink(p, ec);
    if (ec) return refuse(path, "its symlink cannot be read: " + ec.message());
    p = fs::weakly_canonical(target.is_absolute() ? target : p.parent_path() / target, ec);
    if (ec) return refuse(path, "it cannot be resolved: " + ec.message());
  }
  fs::path rel;
  if (p != root_ && !inside(p, root_, &rel))
    return refuse(
        path, "it resolves (through a symlink) to " + p.string() + ", outside the working tree");
  for (const auto& part : rel)
    if (part == ".git")
      return refuse(path, "it resolves into the .git folder, which is managed by loopr");
  return p;
}

std::string Sandbox::relative(const fs::path& resolved) const {
  if (resolved == root_) return ".";
  fs::path rel = resolved.lexically_relative(root_);
  return rel.empty() ? resolved.string() : rel.string();
}

}  // namespace loopr::tools
