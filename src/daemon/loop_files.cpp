// A loop's files as the API serves them (loopr/daemon/loop_files.hpp).
#include <loopr/core/commit_message.hpp>
#include <loopr/core/text.hpp>
#include <loopr/daemon/loop_files.hpp>
#include <loopr/git/artifact.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>

namespace loopr::daemon {

namespace {

constexpr std::size_t kMaxFileBytes = 1 << 20;  // an artifact, transcript or file shown

constexpr int kMaxForkWalk = 10'000;  // commits walked back to find where a loop's work starts

/// Whether a commit message is one loopr wrote for loop `id` (core/commit_message.hpp).
bool made_for(std::string_view message, std::string_view id) {
  return loop_commit_id(message) == id;
}

/// Whether it is one loopr wrote for another loop (a commit the model made itself is neither).
bool made_for_another(std::string_view message, std::string_view id) {
  auto named = loop_commit_id(message);
  return named && *named != id;
}

/// Whether `rel` names a place inside a folder: relative, no `..` segment.
bool inside(const std::string& rel) {
  return !rel.empty() && rel.front() != '/' && rel.find("..") == std::string::npos;
}

/// The branches a loop's work is on, the one its diff shows first.
std::vector<std::string> branches_of(const api::LoopRow& loop) {
  std::vector<std::string> out;
  if (loop.is_plan()) out.push_back(git::integration_branch(loop.id));
  if (!loop.branch.empty()) out.push_back(loop.branch);
  out.push_back(git::archive_branch(loop.id));
  if (!loop.is_plan() && !loop.plan_id.empty())
    out.push_back(git::integration_branch(loop.plan_id));
  return out;
}

api::FileView read_from_branches(const RepoPaths& paths, const std::vector<std::string>& branches,
                                 const std::string& rel) {
  api::FileView f;
  f.path = rel;
  auto repo = git::Repository::open(paths.root);
  if (!repo) {
    f.problem = repo.error().message;
    return f;
  }
  for (const auto& b : branches) {
    auto text = repo->read_file(b, rel, kMaxFileBytes);
    if (!text) continue;
    f.truncated = text->size() > kMaxFileBytes;
    if (f.truncated) text->resize(kMaxFileBytes);
    f.text = std::move(*text);
    f.source = b;
    return f;
  }
  f.problem = "cannot read " + rel + " (its worktree and branches do not hold it)";
  return f;
}

}  // namespace

api::FileView read_artifact(const RepoPaths& paths, const api::LoopRow& loop,
                            const std::string& rel) {
  // The one reader (git/artifact.hpp): the model writes the worktree, so a symlink there may point
  // anywhere on the machine and a FIFO would hold a reads thread; neither is opened.
  git::ArtifactText read = git::read_loop_artifact(
      {paths.root, loop.worktree, rel, git::artifact_branches(loop.branch, loop.id, loop.plan_id)},
      kMaxFileBytes);
  api::FileView f;
  f.path = rel;
  if (!read.bytes) {
    f.problem = std::move(read.problem);
    return f;
  }
  f.text = valid_utf8(*read.bytes);
  f.truncated = read.truncated;
  f.source = std::move(read.branch);
  return f;
}

api::FileView read_committed(const RepoPaths& paths, const api::LoopRow& loop,
                             const std::string& rel) {
  if (!inside(rel)) {
    api::FileView f;
    f.path = rel;
    f.problem = "not a path inside the repository: " + rel;
    return f;
  }
  return read_from_branches(paths, branches_of(loop), rel);
}

IterationRead read_iteration(const RepoPaths& paths, const std::string& id, int n,
                             std::size_t max_bytes) {
  return read_iteration_files(paths, id, n, max_bytes);
}

api::IterationView iteration_view(const IterationRead& read) {
  api::IterationView out;
  out.id = read.loop_id;
  out.n = read.n;
  for (const auto& spec : kIterationFiles) {
    const IterationFileText& f = read[spec.file];
    out.files.push_back({spec.name, f.text, f.truncated, f.problem});
  }
  return out;
}

namespace {

// The branches whose diff shows the loop's work, first the one that names the section. A plan's
// diff is its integration branch (the whole tree's change) once that holds anything; before (at
// the gate) it is the plan's own branch: the plan it wrote.
std::vector<std::string> diff_branches(const api::LoopRow& detail) {
  std::vector<std::string> branches;
  if (detail.is_plan()) branches.push_back(git::integration_branch(detail.id));
  if (!detail.branch.empty()) branches.push_back(detail.branch);
  branches.push_back(git::archive_branch(detail.id));
  return branches;
}

// Where a plan's own work starts: its own branch starts where the base was when it began, so
// its tree's change is everything on its integration branch since. Once merged, `base...branch`
// is empty: the fork point still shows the work. Unknown: nullopt (the fork from the base).
std::optional<std::string> plan_fork(git::Repository& repo, const api::LoopRow& detail) {
  const std::string& id = detail.id;
  for (const auto& b : {detail.branch, git::archive_branch(id)}) {
    if (b.empty()) continue;
    auto found = repo.first_parent_where(
        b, [&id](std::string_view m) { return !made_for(m, id); }, kMaxForkWalk);
    if (found && *found) return *found;
  }
  return std::nullopt;
}

}  // namespace

api::DiffView read_loop_diff(const RepoPaths& paths, const api::LoopRow& detail,
                             const std::string& base) {
  const bool is_plan = detail.is_plan();
  const std::string& id = detail.id;
  const std::vector<std::string> branches = diff_branches(detail);
  api::DiffView out;
  out.label = "git diff " + base + "..." + branches.front();
  out.diff.path = branches.front();
  auto repo = git::Repository::open(paths.root);
  if (!repo) {
    out.diff.problem = repo.error().message;
    return out;
  }
  // A loop of the tree starts from its integration branch, so its work is what its branch
  // added since the last commit loopr made for another loop (below, per branch).
  const std::optional<std::string> fork =
      is_plan ? plan_fork(*repo, detail) : std::optional<std::string>();
  git::DiffLimits limits;
  limits.max_lines = 50'000;
  limits.max_bytes = kMaxFileBytes;
  std::string problem;
  for (const auto& branch : branches) {
    std::optional<std::string> from = fork;
    if (!is_plan) {
      auto found = repo->first_parent_where(
          branch, [&id](std::string_view m) { return made_for_another(m, id); }, kMaxForkWalk);
      if (found && *found) from = *found;
    }
    const std::string from_rev = from.value_or(base);
    auto diff = repo->diff_since_fork(from_rev, branch, limits);
    if (!diff) {
      if (problem.empty()) problem = "no diff: " + diff.error().message;
      continue;
    }
    // The first branch that has a diff names the section; a later one replaces it only
    // when it holds a change the earlier ones did not show.
    if (out.diff.text && diff->empty()) continue;
    out.label = "git diff " + (from ? from->substr(0, 12) : base) + "..." + branch;
    out.diff.path = branch;
    out.diff.text = std::move(*diff);
    if (!out.diff.text->empty()) break;
  }
  if (!out.diff.text) out.diff.problem = problem;
  return out;
}

}  // namespace loopr::daemon
