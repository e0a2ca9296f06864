// The one reader of a loop's artifact (git/artifact.hpp).
#include <loopr/core/file_read.hpp>
#include <loopr/git/artifact.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>

namespace loopr::git {

std::vector<std::string> artifact_branches(const std::string& branch, const std::string& loop_id,
                                           const std::string& plan_id) {
  std::vector<std::string> out;
  out.push_back(branch.empty() ? loop_branch(plan_id, loop_id) : branch);
  out.push_back(archive_branch(loop_id));
  if (!plan_id.empty()) out.push_back(integration_branch(plan_id));
  return out;
}

std::vector<std::string> artifact_branches(const Loop& loop) {
  return artifact_branches(loop.branch, loop.id, loop.plan_id);
}

ArtifactText read_loop_artifact(const ArtifactPlace& where, std::size_t max_bytes) {
  ArtifactText out;
  const std::string& rel = where.rel;
  if (!is_inside_path(rel)) {
    out.problem = "not a path inside the repository: " + rel;
    return out;
  }
  if (!where.worktree.empty()) {
    FileBytes f = read_file_inside(where.worktree, rel, max_bytes);
    if (f.bytes) {
      out.bytes = std::move(f.bytes);
      out.truncated = f.truncated;
      return out;
    }
    if (f.why == FileProblem::refused) out.worktree_problem = f.problem;
    out.problem = f.problem;
  }
  if (where.branches.empty()) {
    if (out.problem.empty()) out.problem = "no worktree to read " + rel + " from";
    return out;
  }
  auto repo = Repository::open(where.repo);
  if (!repo) {
    out.problem = repo.error().message;
    return out;
  }
  for (const auto& b : where.branches) {
    auto text = repo->read_file(b, rel, max_bytes);  // at most max_bytes + 1
    if (!text) continue;
    out.truncated = text->size() > max_bytes;
    if (out.truncated) text->resize(max_bytes);
    out.bytes = std::move(*text);
    out.branch = b;
    return out;
  }
  out.problem = "cannot read " + rel + " (its worktree and branches do not hold it" +
                (out.worktree_problem.empty() ? "" : "; " + out.worktree_problem) + ")";
  return out;
}

}  // namespace loopr::git
