// A loop's (or a tree's) change as typed records for the protection rule
// (core/protected_paths.hpp): what kind of change each path had, and for the few files a
// `file#key` pattern names, their content before and after.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <loopr/git/repository.hpp>
#include <loopr/git/work_tree_state.hpp>
#include <loopr/git/worktree.hpp>

#include "git/deadline.hpp"
#include "git/history.hpp"
#include "git/libgit2.hpp"

namespace loopr::git {

using namespace detail;

namespace {

constexpr std::size_t kContentCap = 1 << 20;

int skip_private(const git_diff*, const git_diff_delta* delta, const char*, void*) {
  const char* path = delta->new_file.path ? delta->new_file.path : delta->old_file.path;
  return path && is_loopr_private_path(path) ? 1 : 0;
}

bool wants_content(const std::vector<std::string>& patterns, const PathChange& c) {
  return first_match(patterns, c.path) ||
         (!c.old_path.empty() && first_match(patterns, c.old_path));
}

std::optional<std::string> blob_text(git_repository* repo, const git_diff_file& file) {
  if (git_oid_is_zero(&file.id) || file.mode == GIT_FILEMODE_UNREADABLE) return std::nullopt;
  git_blob* raw = nullptr;
  if (git_blob_lookup(&raw, repo, &file.id) != 0) return std::nullopt;
  BlobPtr blob(raw);
  const auto* data = static_cast<const char*>(git_blob_rawcontent(blob.get()));
  auto size = static_cast<std::size_t>(git_blob_rawsize(blob.get()));
  return std::string(data, std::min(size, kContentCap));
}

// A file of the work tree as git would store it, never following a symlink and never blocking
// on a FIFO the model left (a special file reads as empty).
std::optional<std::string> workdir_text(const std::filesystem::path& file) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) return std::nullopt;
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    ssize_t n = ::readlink(file.c_str(), target, sizeof target);
    return n < 0 ? std::string() : std::string(target, static_cast<std::size_t>(n));
  }
  if (!S_ISREG(st.st_mode)) return std::string();
  int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::string();
  std::string out;
  char buf[16384];
  for (ssize_t n; out.size() < kContentCap && (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  if (out.size() > kContentCap) out.resize(kContentCap);
  return out;
}

// The new side's blob id: a work tree file git has not hashed yet is hashed here.
git_oid new_id(const git_diff_delta* d, const std::filesystem::path* workdir) {
  if ((d->new_file.flags & GIT_DIFF_FLAG_VALID_ID) || !workdir || !d->new_file.path)
    return d->new_file.id;
  git_oid id{};
  if (git_odb_hashfile(&id, (*workdir / d->new_file.path).c_str(), GIT_OBJECT_BLOB) != 0)
    return d->new_file.id;
  return id;
}

PathChange change_of(const git_diff_delta* d, const std::filesystem::path* workdir) {
  PathChange c;
  const char* now = d->new_file.path ? d->new_file.path : d->old_file.path;
  c.path = now ? now : "";
  switch (d->status) {
    case GIT_DELTA_ADDED:
    case GIT_DELTA_UNTRACKED:
    case GIT_DELTA_IGNORED:
    case GIT_DELTA_COPIED:
      c.kind = PathChange::Kind::added;
      break;
    case GIT_DELTA_DELETED:
      c.kind = PathChange::Kind::deleted;
      c.path = d->old_file.path ? d->old_file.path : c.path;
      break;
    case GIT_DELTA_RENAMED:
      c.kind = PathChange::Kind::renamed;
      c.old_path = d->old_file.path ? d->old_file.path : "";
      break;
    case GIT_DELTA_TYPECHANGE:
      c.kind = PathChange::Kind::mode_changed;
      break;
    default: {
      const git_oid now_id = new_id(d, workdir);
      c.kind = d->old_file.mode != d->new_file.mode && git_oid_equal(&d->old_file.id, &now_id)
                   ? PathChange::Kind::mode_changed
                   : PathChange::Kind::modified;
    }
  }
  return c;
}

// What the merge policy reads of a committed delta: the modes, the new blob's apparent size
// (its header only: an 800 MiB blob of zeros is never read), a new symlink's target.
void add_object_facts(git_repository* repo, const git_diff_delta* d, PathChange& c) {
  c.old_mode = d->old_file.mode;
  c.new_mode = c.kind == PathChange::Kind::deleted ? 0 : d->new_file.mode;
  if (c.new_mode == 0 || git_oid_is_zero(&d->new_file.id) || c.new_mode == GIT_FILEMODE_COMMIT)
    return;
  git_odb* raw = nullptr;
  if (git_repository_odb(&raw, repo) != 0) return;
  std::size_t size = 0;
  git_object_t type{};
  if (git_odb_read_header(&size, &type, raw, &d->new_file.id) == 0) c.new_size = size;
  git_odb_free(raw);
  if (c.new_mode == GIT_FILEMODE_LINK)
    c.link_target = blob_text(repo, d->new_file).value_or(std::string());
}

// Every delta of `diff` as a record; `workdir` set: the new side is the work tree there.
std::vector<PathChange> changes_of(git_repository* repo, git_diff* diff,
                                   const std::vector<std::string>& content_patterns,
                                   const std::filesystem::path* workdir) {
  std::vector<PathChange> out;
  for (std::size_t i = 0, n = git_diff_num_deltas(diff); i < n; ++i) {
    const git_diff_delta* d = git_diff_get_delta(diff, i);
    PathChange c = change_of(d, workdir);
    if (c.path.empty()) continue;
    if (!workdir) add_object_facts(repo, d, c);
    if (wants_content(content_patterns, c)) {
      const bool had = c.kind != PathChange::Kind::added;
      const bool has = c.kind != PathChange::Kind::deleted;
      if (had) c.before = blob_text(repo, d->old_file);
      if (has) c.after = workdir ? workdir_text(*workdir / c.path) : blob_text(repo, d->new_file);
    }
    out.push_back(std::move(c));
  }
  return out;
}

// Renames (also of a file not committed yet: the check runs before the checkpoint).
Result<void> find_renames(git_diff* diff) {
  git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
  find.flags = GIT_DIFF_FIND_RENAMES | GIT_DIFF_FIND_FOR_UNTRACKED;
  return check(git_diff_find_similar(diff, &find), "finding renames");
}

}  // namespace

Result<std::vector<PathChange>> Worktree::path_changes_since(
    const std::string& since, const std::vector<std::string>& content_patterns) const {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid head, head_id(repo.get()));
  LOOPR_ASSIGN(git_oid start, start_commit(repo.get(), since, head));
  LOOPR_ASSIGN(TreePtr tree, commit_tree(repo.get(), start));
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
               GIT_DIFF_INCLUDE_IGNORED | GIT_DIFF_INCLUDE_TYPECHANGE;
  opts.notify_cb = skip_private;
  LOOPR_ASSIGN(DiffPtr diff,
               make<DiffPtr>("diffing " + path_.string(), git_diff_tree_to_workdir_with_index,
                             repo.get(), tree.get(), &opts));
  count_work_tree_read();
  LOOPR_TRY(find_renames(diff.get()));
  return changes_of(repo.get(), diff.get(), content_patterns, &path_);
}

Result<std::vector<PathChange>> Repository::path_changes_since_fork(
    const std::string& from, const std::string& to,
    const std::vector<std::string>& content_patterns) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
  auto commit_of = [&](const std::string& rev) -> Result<git_oid> {
    LOOPR_ASSIGN(ObjectPtr obj,
                 make<ObjectPtr>("resolving " + rev, git_revparse_single, repo.get(), rev.c_str()));
    LOOPR_ASSIGN(ObjectPtr commit, make<ObjectPtr>("reading the commit " + rev, git_object_peel,
                                                   obj.get(), GIT_OBJECT_COMMIT));
    return *git_object_id(commit.get());
  };
  LOOPR_ASSIGN(git_oid a, commit_of(from));
  LOOPR_ASSIGN(git_oid b, commit_of(to));
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
  LOOPR_ASSIGN(ForkDiff fork, fork_diff(repo.get(), a, b, from + " and " + to, opts));
  LOOPR_TRY(find_renames(fork.diff.get()));
  return changes_of(repo.get(), fork.diff.get(), content_patterns, nullptr);
}

namespace {

// `core.hooksPath` relative to the repository when it points inside it ("" otherwise: a
// folder outside the repository is the person's, not something a tree can write).
std::string hooks_inside(git_repository* repo, const std::filesystem::path& root) {
  git_config* raw = nullptr;
  if (git_repository_config(&raw, repo) != 0) return {};
  Buf value;
  int rc = git_config_get_string_buf(&value.buf, raw, "core.hooksPath");
  git_config_free(raw);
  if (rc != 0) return {};
  std::filesystem::path hooks = value.str();
  if (hooks.is_relative()) return hooks.lexically_normal().string();
  std::filesystem::path rel = hooks.lexically_normal().lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") return {};
  return rel.string();
}

}  // namespace

Result<std::vector<HeldPath>> Repository::merge_findings(const std::string& from,
                                                         const std::string& to,
                                                         MergeRules rules) const {
  std::vector<std::string> content = keyed_files(rules.harness);
  content.push_back("/.gitignore");
  LOOPR_ASSIGN(std::vector<PathChange> changes, path_changes_since_fork(from, to, content));
  add_keyed_changes(changes, rules.harness);
  {
    LOOPR_ASSIGN(RepoPtr repo, open_repo(root_, OpenMode::exact));
    rules.hooks_path = hooks_inside(repo.get(), root_);
  }
  return merge_policy(changes, rules);
}

Result<std::vector<std::string>> Repository::changed_since_fork(const std::string& from,
                                                                const std::string& to) const {
  LOOPR_ASSIGN(std::vector<PathChange> changes, path_changes_since_fork(from, to));
  std::vector<std::string> paths;
  for (const PathChange& c : changes) {
    paths.push_back(c.path);
    if (!c.old_path.empty()) paths.push_back(c.old_path);
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

}  // namespace loopr::git
