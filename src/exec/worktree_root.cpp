// `executor.worktree_root`: loops' worktrees on a filesystem the cluster's nodes see. The git
// module makes every worktree at `.loopr/worktrees/<loop-id>`; making that folder a link to
// `<root>/<repo name>-<hash of its path>` moves them all without a second notion of where
// worktrees are (one repository per folder under the root, so two repositories never collide).
#include <fstream>
#include <sstream>

#include <loopr/exec/executor.hpp>

#include "exec/bwrap_args.hpp"
#include "exec/path_hash.hpp"

namespace loopr::exec {
namespace fs = std::filesystem;

namespace {

bool empty_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec) && fs::directory_iterator(p, ec) == fs::directory_iterator();
}

// `.loopr/worktrees` as a link is not a folder to git, so `.loopr/worktrees/` in .gitignore does
// not match it: it goes into the repository's info/exclude instead (never committed).
Result<void> exclude_link(const RepoPaths& paths) {
  GitDirs git = find_git_dirs(paths.root);
  if (git.common_dir.empty()) return ok();
  fs::path exclude = git.common_dir / "info" / "exclude";
  std::error_code ec;
  fs::create_directories(exclude.parent_path(), ec);
  std::ifstream in(exclude);
  for (std::string line; std::getline(in, line);)
    if (line == "/.loopr/worktrees") return ok();
  std::ofstream out(exclude, std::ios::app);
  out << "/.loopr/worktrees\n";
  if (!out) return make_error(ErrorCode::io, "cannot write " + exclude.string());
  return ok();
}

}  // namespace

Result<void> place_worktrees(const ExecutorConfig& config, const RepoPaths& paths) {
  if (config.worktree_root.empty()) return ok();
  std::error_code ec;
  fs::path root = fs::weakly_canonical(paths.root, ec);
  if (ec) root = paths.root;
  fs::path target =
      fs::path(config.worktree_root) / (root.filename().string() + "-" + path_hash(root.string()));
  fs::create_directories(target, ec);
  if (ec)
    return make_error(ErrorCode::io, "cannot create the worktree folder " + target.string() + ": " +
                                         ec.message() +
                                         " (make executor.worktree_root writable for the daemon)");
  fs::path link = paths.worktrees_dir();
  if (fs::is_symlink(link, ec)) {
    fs::path now = fs::read_symlink(link, ec);
    if (now == target) return exclude_link(paths);
    if (!empty_dir(now) && fs::exists(now, ec))
      return make_error(ErrorCode::invalid_argument,
                        "loops still have worktrees in " + now.string() +
                            " (finish or remove those loops before executor.worktree_root moves "
                            "worktrees to " +
                            target.string() + ", or set it back)");
    fs::remove(link, ec);
  } else if (fs::exists(link, ec)) {
    if (!empty_dir(link))
      return make_error(ErrorCode::invalid_argument,
                        "loops still have worktrees in " + link.string() +
                            " (finish or remove those loops before executor.worktree_root moves "
                            "worktrees to " +
                            target.string() + ", or remove executor.worktree_root)");
    fs::remove(link, ec);
  }
  fs::create_directories(link.parent_path(), ec);
  fs::create_directory_symlink(target, link, ec);
  if (ec)
    return make_error(ErrorCode::io, "cannot link " + link.string() + " to " + target.string() +
                                         ": " + ec.message());
  return exclude_link(paths);
}

}  // namespace loopr::exec
