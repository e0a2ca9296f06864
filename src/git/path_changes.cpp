// A loop's (or a tree's) change as typed records for the protection rule
// (core/protected_paths.hpp): what kind of change each path had, and for the few files a
// `file#key` pattern names, their content before and after.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <set>

#include <loopr/core/clean_checkpoint.hpp>
#include <loopr/git/clean_changes.hpp>
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

std::atomic<std::uint64_t> g_from_checkpoint{0};

// A root-relative path as loopr's tools report it, safe to hand libgit2 as a literal path.
bool plain_path(const std::string& rel) {
  if (rel.empty() || rel.front() == '/' || rel.back() == '/') return false;
  for (std::size_t at = 0; at <= rel.size();) {
    std::size_t end = std::min(rel.find('/', at), rel.size());
    const std::string_view part(rel.data() + at, end - at);
    if (part.empty() || part == "." || part == ".." || part == ".git") return false;
    at = end + 1;
  }
  return true;
}

// The first index entry in `folder_slash` ("dir/"), or nullptr: git tracks nothing there.
const git_index_entry* first_under(git_index* index, const std::string& folder_slash) {
  std::size_t at = 0;
  if (git_index_find_prefix(&at, index, folder_slash.c_str()) != 0) return nullptr;
  return git_index_get_byindex(index, at);
}

// The literal paths whose state may differ from the index: what git did not track at the clean
// checkpoint and what the tools wrote since, each as the first folder on its way that git tracks
// nothing in (then that whole branch of the tree is read as a walk reads it) or as itself. A path
// in a tracked folder brings that folder's first index entry along: then git sees the folder as
// holding tracked files, as in a walk (it decides whether git looks into an ignored folder).
std::vector<std::string> paths_to_read(git_index* index, const std::vector<std::string>& untracked,
                                       const std::vector<std::string>& written) {
  std::set<std::string> out(untracked.begin(), untracked.end());
  for (const std::string& rel : written) {
    std::string at = rel;
    for (std::size_t slash = rel.find('/'); slash != std::string::npos;
         slash = rel.find('/', slash + 1)) {
      if (first_under(index, rel.substr(0, slash + 1)) == nullptr) {
        at = rel.substr(0, slash);
        break;
      }
    }
    out.insert(at);
  }
  std::vector<std::string> anchors;
  for (const std::string& rel : out) {
    const std::size_t slash = rel.rfind('/');
    if (slash == std::string::npos) continue;
    if (const git_index_entry* e = first_under(index, rel.substr(0, slash + 1)))
      anchors.emplace_back(e->path);
  }
  out.insert(anchors.begin(), anchors.end());
  return {out.begin(), out.end()};
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

// git_diff_tree_to_workdir_with_index is tree→index merged with index→workdir (libgit2 1.5,
// diff_generate.c). After a clean checkpoint (CleanCheckpoint: the work tree was the index plus
// the untracked paths it names, and only loopr's tools wrote since), index→workdir can differ
// from the index only at the paths paths_to_read names, so it reads only those: the same deltas
// (an empty list: none, and libgit2's merge of an empty diff changes nothing). nullopt when the
// clean checkpoint is not there, not HEAD any more, or not the index file: then the caller walks.
Result<std::optional<DiffPtr>> diff_from_checkpoint(git_repository* repo,
                                                    const std::filesystem::path& path,
                                                    git_tree* tree, git_diff_options opts,
                                                    const git_oid& head,
                                                    const WrittenSince& written) {
  std::optional<CleanCheckpoint> clean = take_clean_checkpoint(path);
  if (!clean || clean->commit.empty() || clean->commit != written.clean_at ||
      clean->commit != to_hex(head) ||
      !std::all_of(written.paths.begin(), written.paths.end(), plain_path))
    return std::optional<DiffPtr>();
  LOOPR_ASSIGN(IndexPtr index, make<IndexPtr>("opening the index", git_repository_index, repo));
  LOOPR_TRY(check(git_index_read(index.get(), 0), "reading the index"));
  struct stat now {};
  const char* file = git_index_path(index.get());
  if (file == nullptr || ::stat(file, &now) != 0 || !same_file(now, clean->index))
    return std::optional<DiffPtr>();
  LOOPR_ASSIGN(DiffPtr diff, make<DiffPtr>("diffing against the index", git_diff_tree_to_index,
                                           repo, tree, index.get(), &opts));
  const std::vector<std::string> paths =
      paths_to_read(index.get(), clean->untracked, written.paths);
  if (!paths.empty()) {
    std::vector<char*> list;
    for (const std::string& p : paths) list.push_back(const_cast<char*>(p.c_str()));
    opts.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
    opts.pathspec = {list.data(), list.size()};
    LOOPR_ASSIGN(DiffPtr read, make<DiffPtr>("diffing " + path.string(), git_diff_index_to_workdir,
                                             repo, index.get(), &opts));
    LOOPR_TRY(check(git_diff_merge(diff.get(), read.get()), "merging the diffs"));
  }
  g_from_checkpoint.fetch_add(1, std::memory_order_relaxed);
  return std::optional<DiffPtr>(std::move(diff));
}

}  // namespace

std::uint64_t changes_read_from_checkpoint() {
  return g_from_checkpoint.load(std::memory_order_relaxed);
}

namespace {

// The change since `since` of the work tree at `path`; `written` set: from the clean checkpoint
// when it still holds (diff_from_checkpoint), else (and always without it) by a walk.
Result<std::vector<PathChange>> work_tree_changes(const std::filesystem::path& path,
                                                  const std::string& since,
                                                  const std::vector<std::string>& content_patterns,
                                                  const WrittenSince* written) {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path, OpenMode::exact));
  LOOPR_ASSIGN(git_oid head, head_id(repo.get()));
  LOOPR_ASSIGN(git_oid start, start_commit(repo.get(), since, head));
  LOOPR_ASSIGN(TreePtr tree, commit_tree(repo.get(), start));
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
               GIT_DIFF_INCLUDE_IGNORED | GIT_DIFF_INCLUDE_TYPECHANGE;
  opts.notify_cb = skip_private;
  std::optional<DiffPtr> known;
  if (written != nullptr) {
    // Whatever goes wrong on this way, the walk below still answers.
    auto read = diff_from_checkpoint(repo.get(), path, tree.get(), opts, head, *written);
    if (read.ok()) known = std::move(read).value();
  } else {
    drop_clean_checkpoint(path);  // taken by the first check after it, whichever way it reads
  }
  if (!known) {
    LOOPR_ASSIGN(known,
                 make<DiffPtr>("diffing " + path.string(), git_diff_tree_to_workdir_with_index,
                               repo.get(), tree.get(), &opts));
    count_work_tree_read();
  }
  DiffPtr diff = std::move(*known);
  LOOPR_TRY(find_renames(diff.get()));
  return changes_of(repo.get(), diff.get(), content_patterns, &path);
}

}  // namespace

Result<std::vector<PathChange>> Worktree::path_changes_since(
    const std::string& since, const std::vector<std::string>& content_patterns) const {
  return work_tree_changes(path_, since, content_patterns, nullptr);
}

Result<std::vector<PathChange>> path_changes_after(const Worktree& wt, const std::string& since,
                                                   const std::vector<std::string>& content_patterns,
                                                   const WrittenSince& written) {
  return work_tree_changes(wt.path(), since, content_patterns, &written);
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
