#include <atomic>

#include <loopr/git/work_tree_state.hpp>

#include "git/deadline.hpp"
#include "git/libgit2.hpp"

namespace loopr::git {

using namespace detail;

namespace {
std::atomic<std::uint64_t> g_work_tree_reads{0};
}  // namespace

std::uint64_t work_tree_reads() { return g_work_tree_reads.load(std::memory_order_relaxed); }

void detail::count_work_tree_read() { g_work_tree_reads.fetch_add(1, std::memory_order_relaxed); }

Result<bool> is_ignored(const std::filesystem::path& root, const std::string& path) {
  WorkDeadline deadline;  // git reads the work tree (git/deadline.hpp)
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root, OpenMode::exact));
  int ignored = 0;
  LOOPR_TRY(check(git_ignore_path_is_ignored(&ignored, repo.get(), path.c_str()),
                  "asking git whether " + path + " is ignored"));
  return ignored != 0;
}

Result<std::string> operation_in_progress(const std::filesystem::path& root) {
  LOOPR_ASSIGN(RepoPtr repo, open_repo(root, OpenMode::exact));
  switch (git_repository_state(repo.get())) {
    case GIT_REPOSITORY_STATE_NONE:
      return std::string();
    case GIT_REPOSITORY_STATE_MERGE:
      return std::string("merge");
    case GIT_REPOSITORY_STATE_REVERT:
    case GIT_REPOSITORY_STATE_REVERT_SEQUENCE:
      return std::string("revert");
    case GIT_REPOSITORY_STATE_CHERRYPICK:
    case GIT_REPOSITORY_STATE_CHERRYPICK_SEQUENCE:
      return std::string("cherry-pick");
    case GIT_REPOSITORY_STATE_BISECT:
      return std::string("bisect");
    case GIT_REPOSITORY_STATE_APPLY_MAILBOX:
    case GIT_REPOSITORY_STATE_APPLY_MAILBOX_OR_REBASE:
      return std::string("apply-mailbox");
    default:
      return std::string("rebase");
  }
}

}  // namespace loopr::git
