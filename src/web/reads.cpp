// The web UI's reads (reads.hpp).
#include "web/reads.hpp"

#include <fstream>

#include <loopr/core/commit_message.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>

namespace loopr::daemon::web {

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

ShownFile read_from_branches(const RepoPaths& paths, const std::vector<std::string>& branches,
                             const std::string& rel) {
  ShownFile f;
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

/// At most kMaxFileBytes of a file; nullopt when it cannot be opened.
ShownFile read_shown(const std::filesystem::path& p, std::string shown_path) {
  ShownFile f;
  f.path = std::move(shown_path);
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    f.problem = "(no " + p.filename().string() + ")";
    return f;
  }
  std::string text(kMaxFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxFileBytes) {
    text.resize(kMaxFileBytes);
    f.truncated = true;
  }
  f.text = std::move(text);
  return f;
}

ShownFile read_artifact(const RepoPaths& paths, const api::LoopRow& loop, const std::string& rel) {
  const std::string& worktree = loop.worktree;
  if (!worktree.empty() && inside(rel)) {
    // The model writes the worktree: a symlink there may point anywhere on the machine. Read
    // only a regular file whose real place is inside the worktree.
    std::error_code ec;
    const auto root = std::filesystem::canonical(worktree, ec);
    std::error_code ec2;
    const auto real = std::filesystem::canonical(std::filesystem::path(worktree) / rel, ec2);
    const auto from_root = real.lexically_relative(root);
    if (!ec && !ec2 && !from_root.empty() && *from_root.begin() != ".." &&
        std::filesystem::is_regular_file(real, ec2)) {
      auto f = read_shown(real, rel);
      if (f.text) return f;
    }
  }
  std::vector<std::string> branches;
  if (!loop.branch.empty()) branches.push_back(loop.branch);
  branches.push_back(git::archive_branch(loop.id));
  if (!loop.plan_id.empty()) branches.push_back(git::integration_branch(loop.plan_id));
  return read_from_branches(paths, branches, rel);
}

ShownFile read_committed(const RepoPaths& paths, const api::LoopRow& loop, const std::string& rel) {
  if (!inside(rel)) {
    ShownFile f;
    f.path = rel;
    f.problem = "not a path inside the repository: " + rel;
    return f;
  }
  return read_from_branches(paths, branches_of(loop), rel);
}

IterationFiles read_iteration(const RepoPaths& paths, const std::string& id, int n) {
  return read_iteration_files(paths, id, n, kIterationFilePageBytes);
}

LoopDiff read_loop_diff(const RepoPaths& paths, const api::LoopRow& detail,
                        const std::string& base) {
  // A plan's diff is its integration branch (the whole tree's change) once that holds
  // anything; before (at the gate) it is the plan's own branch: the plan it wrote.
  const bool is_plan = detail.is_plan();
  const std::string& own = detail.branch;
  const std::string& id = detail.id;
  LoopDiff out;
  std::vector<std::string> branches;
  if (is_plan) branches.push_back(git::integration_branch(id));
  if (!own.empty()) branches.push_back(own);
  branches.push_back(git::archive_branch(id));
  out.label = "git diff " + base + "..." + branches.front();
  out.diff.path = branches.front();
  auto repo = git::Repository::open(paths.root);
  if (!repo) {
    out.diff.problem = repo.error().message;
    return out;
  }
  // Where the loop's own work starts: a plan's own branch starts where the base was when
  // it began, so its tree's change is everything on its integration branch since; a loop
  // of the tree starts from its integration branch, so its work is what its branch added
  // since the last commit loopr made for another loop. Once merged, `base...branch` is
  // empty: the fork point still shows the work. Unknown: the fork from the base.
  std::optional<std::string> fork;
  for (const auto& b : is_plan ? std::vector<std::string>{own, git::archive_branch(id)}
                               : std::vector<std::string>{}) {
    if (b.empty()) continue;
    auto found = repo->first_parent_where(
        b, [&id](std::string_view m) { return !made_for(m, id); }, kMaxForkWalk);
    if (found && *found) {
      fork = *found;
      break;
    }
  }
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

}  // namespace loopr::daemon::web
