// A work tree handle: opening it exactly, HEAD and history (what prompts show of the past).
#include <algorithm>
#include <cstdint>
#include <set>

#include <loopr/git/worktree.hpp>

#include "git/history.hpp"
#include "git/libgit2.hpp"

namespace loopr::git {

using namespace detail;

namespace detail {

Result<git_oid> head_id(git_repository* repo) {
  git_oid id;
  LOOPR_TRY(check(git_reference_name_to_id(&id, repo, "HEAD"), "resolving HEAD"));
  return id;
}

Result<std::string> head_branch_ref(git_repository* repo) {
  LOOPR_ASSIGN(RefPtr head, make<RefPtr>("reading HEAD", git_reference_lookup, repo, "HEAD"));
  if (git_reference_type(head.get()) != GIT_REFERENCE_SYMBOLIC) {
    return make_error(
        ErrorCode::invalid_argument,
        "HEAD is detached in " + workdir_of(repo).string() + "; check out a branch first");
  }
  return std::string(git_reference_symbolic_target(head.get()));
}

Result<std::vector<std::string>> oneline_log(git_repository* repo, const git_oid& start, int n) {
  // git log's default order, walked the way git walks it: newest committer date first, a
  // commit's parents queued only once the commit is shown, equal dates in the order queued.
  // Not libgit2's GIT_SORT_TOPOLOGICAL, which reads the WHOLE history before its first entry:
  // every iteration's log of a few entries then cost O(commits on the integration branch),
  // 16 % of the daemon's CPU at 1,000 loops. This reads the n commits shown and their parents.
  std::vector<std::string> lines;
  if (n <= 0) return lines;
  struct Queued {
    git_time_t date;
    std::uint64_t order;
    CommitPtr commit;
  };
  auto later_first = [](const Queued& a, const Queued& b) {  // std heap: the top is the "largest"
    return a.date != b.date ? a.date < b.date : a.order > b.order;
  };
  std::vector<Queued> queue;
  std::set<std::string> seen;
  std::uint64_t queued = 0;
  auto enqueue = [&](const git_oid& id) -> Result<void> {
    if (!seen.insert(to_hex(id)).second) return {};
    LOOPR_ASSIGN(CommitPtr commit, lookup_commit(repo, id));
    git_time_t date = git_commit_time(commit.get());
    queue.push_back({date, queued++, std::move(commit)});
    std::push_heap(queue.begin(), queue.end(), later_first);
    return {};
  };
  LOOPR_TRY(enqueue(start));
  while (static_cast<int>(lines.size()) < n && !queue.empty()) {
    std::pop_heap(queue.begin(), queue.end(), later_first);
    CommitPtr commit = std::move(queue.back().commit);
    queue.pop_back();
    Buf short_id;
    LOOPR_TRY(
        check(git_object_short_id(&short_id.buf, reinterpret_cast<const git_object*>(commit.get())),
              "abbreviating " + to_hex(*git_commit_id(commit.get()))));
    const char* summary = git_commit_summary(commit.get());
    lines.push_back(short_id.str() + " " + (summary ? summary : ""));
    for (unsigned i = 0; i < git_commit_parentcount(commit.get()); ++i) {
      LOOPR_TRY(enqueue(*git_commit_parent_id(commit.get(), i)));
    }
  }
  return lines;
}

}  // namespace detail

Result<Worktree> Worktree::open(const std::filesystem::path& path) {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path, OpenMode::exact));
  if (git_repository_is_bare(repo.get())) {
    return make_error(ErrorCode::invalid_argument, path.string() + " is a bare repository");
  }
  return Worktree(workdir_of(repo.get()));
}

Result<std::string> Worktree::head_sha() const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid id, head_id(repo.get()));
  return to_hex(id);
}

Result<std::string> Worktree::branch() const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(std::string ref, head_branch_ref(repo.get()));
  constexpr std::string_view kHeads = "refs/heads/";
  if (ref.compare(0, kHeads.size(), kHeads) != 0) {
    return make_error(ErrorCode::invalid_argument, "HEAD points at " + ref + ", not a branch");
  }
  return ref.substr(kHeads.size());
}

Result<std::vector<std::string>> Worktree::log(int n) const {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(path_, OpenMode::exact));
  LOOPR_ASSIGN(git_oid id, head_id(repo.get()));
  return oneline_log(repo.get(), id, n);
}

}  // namespace loopr::git
