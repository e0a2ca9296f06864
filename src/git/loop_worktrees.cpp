// Loops' branches and worktrees over Repository / Worktree. Every step is safe to redo after a
// crash: branches that exist are taken as they are, a merge made before is `up_to_date`.
#include <spdlog/spdlog.h>

#include <system_error>

#include <loopr/core/commit_message.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/git/artifact.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/loop_worktrees.hpp>
#include <loopr/git/repository.hpp>
#include <loopr/git/worktree.hpp>

namespace loopr::git {
namespace {

std::string branch_of(const Loop& loop) {
  return loop.branch.empty() ? loop_branch(loop.plan_id, loop.id) : loop.branch;
}

// A folder in `.loopr/worktrees/` that git does not know as a worktree (a crash between making
// it and registering it, or between unregistering and deleting it) is moved to
// `.loopr/archive/`, so nothing in it is lost and the loop's worktree can be made again.
bool set_aside_if_stray(const Repository& repo, const RepoPaths& paths, const std::string& id) {
  auto folder = paths.worktree(id);
  std::error_code ec;
  if (!std::filesystem::exists(folder, ec) || repo.worktree(id)) return false;
  std::filesystem::create_directories(paths.archive_dir(), ec);
  auto target = paths.archive_dir() / (id + "-stray-" + std::to_string(now_ms()));
  std::filesystem::rename(folder, target, ec);
  if (ec) {
    spdlog::warn("loop {}: cannot move the stray folder {} aside: {}", id, folder.string(),
                 ec.message());
    return false;
  }
  spdlog::warn("loop {}: moved a folder git did not know as a worktree to {}", id, target.string());
  return true;
}

}  // namespace

Result<void> LoopWorktrees::check_base(const std::string& base_branch) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  LOOPR_ASSIGN(bool has_base, r.has_branch(base_branch));
  if (!has_base)
    return make_error(ErrorCode::invalid_argument,
                      "the base branch " + base_branch +
                          " does not exist (set base_branch in .loopr/config.yml)");
  return ok();
}

Result<bool> LoopWorktrees::plan_branches_exist(const std::string& plan_id) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  return r.has_branch(integration_branch(plan_id));
}

Result<void> LoopWorktrees::start_plan(const std::string& plan_id,
                                       const std::string& base_branch) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  LOOPR_TRY(r.create_branch(integration_branch(plan_id), base_branch));
  return ok();
}

Result<PreparedWorktree> LoopWorktrees::prepare(const Loop& loop,
                                                const std::string& base_branch) const {
  std::error_code ec;
  if (!loop.worktree.empty() && std::filesystem::exists(loop.worktree, ec))
    return PreparedWorktree{loop.worktree, branch_of(loop), std::nullopt};
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  const std::string integration = integration_branch(loop.plan_id);
  LOOPR_ASSIGN(bool has_integration, r.has_branch(integration));
  if (!has_integration) {
    // Two loops of the plan preparing at once may both find it missing: the second one's
    // already_exists is the branch the first one made, which is what it wanted.
    auto made = r.create_branch(integration, base_branch);
    if (!made && made.error().code != ErrorCode::already_exists) return made.take_error();
  }
  PreparedWorktree out;
  out.branch = branch_of(loop);
  LOOPR_ASSIGN(bool has, r.has_branch(out.branch));
  if (!has) {
    // The integration tip the branch starts from, as create_branch made it. Not read again
    // later: a merge landing meanwhile would make it name a tip the branch does not have, and
    // the rebase at the loop's next iteration boundary would be skipped.
    LOOPR_ASSIGN(std::string tip, r.create_branch(out.branch, integration));
    out.based_on = std::move(tip);
  }
  set_aside_if_stray(r, paths_, loop.id);
  // A registered worktree the record does not name was being made when a daemon died: its
  // checkout may be half done, and nothing of the loop's work is in it yet. Make it again.
  if (loop.worktree.empty() && r.worktree(loop.id)) {
    LOOPR_TRY(r.remove_worktree(loop.id, RemoveMode::force));
    spdlog::warn("loop {}: remade the worktree an interrupted start left behind", loop.id);
  }
  auto existing = r.worktree(loop.id);
  Result<Worktree> wt = existing ? std::move(existing) : r.add_worktree(loop.id, out.branch);
  if (!wt) {
    // A registration a killed daemon left half made blocks the name: drop it, try once more.
    auto dropped = r.drop_broken_worktree_registration(loop.id);
    if (dropped && *dropped) {
      spdlog::warn("loop {}: removed a half-made worktree registration", loop.id);
      set_aside_if_stray(r, paths_, loop.id);
      wt = r.add_worktree(loop.id, out.branch);
    }
  }
  if (!wt) return wt.take_error();
  out.worktree = wt->path().string();
  return out;
}

Result<std::string> LoopWorktrees::integration_tip(const std::string& plan_id) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  return r.branch_sha(integration_branch(plan_id));
}

Result<RebaseOutcome> LoopWorktrees::rebase_onto_integration(const Loop& loop) const {
  const std::string integration = integration_branch(loop.plan_id);
  LOOPR_ASSIGN(Worktree wt, Worktree::open(loop.worktree));
  auto out = wt.rebase_onto(integration);
  if (out && out->kind == RebaseOutcome::Kind::local_changes) {
    // Edits an interrupted iteration left behind: commit them, then rebase.
    LOOPR_TRY(wt.checkpoint(loop_commit_message(loop.id, "work in progress before a rebase")));
    out = wt.rebase_onto(integration);
  }
  return out;
}

Result<bool> LoopWorktrees::integration_meets_work(const Loop& loop) const {
  LOOPR_ASSIGN(Worktree wt, Worktree::open(loop.worktree));
  return wt.work_meets_changes(loop.tree.based_on, integration_branch(loop.plan_id));
}

Result<IntegrationMerge> LoopWorktrees::merge_into_integration(
    const Loop& loop, bool rebuild, const std::string& base_branch, const std::string& message,
    bool merge_after_rebase, const MergeRules& refusal_rules) const {
  const std::string integration = integration_branch(loop.plan_id);
  const std::string branch = branch_of(loop);
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  LOOPR_ASSIGN(bool has, r.has_branch(integration));
  // What the loop's branch commits, read from git objects, before anything of it is merged.
  MergeRules rules = refusal_rules;
  rules.tree = false;
  LOOPR_ASSIGN(std::vector<HeldPath> refused,
               r.merge_findings(has && !rebuild ? integration : base_branch, branch, rules));
  if (!refused.empty()) {
    IntegrationMerge out;
    out.refused = std::move(refused);
    return out;
  }
  if (rebuild && has) LOOPR_TRY(r.delete_branch(integration));
  if (rebuild || !has) LOOPR_TRY(r.create_branch(integration, base_branch));
  LOOPR_ASSIGN(MergeOutcome m, r.merge(branch, integration, message));
  if (m.kind == MergeOutcome::Kind::conflict && !loop.worktree.empty()) {
    // The integration branch moved under a loop that finished before its next boundary: bring
    // its work onto the new tip, then merge (now a fast-forward).
    LOOPR_ASSIGN(Worktree wt, Worktree::open(loop.worktree));
    LOOPR_ASSIGN(RebaseOutcome rb, wt.rebase_onto(integration));
    if (rb.kind == RebaseOutcome::Kind::conflict || rb.kind == RebaseOutcome::Kind::local_changes)
      return IntegrationMerge{m, rb.conflicts};
    if (!merge_after_rebase) return IntegrationMerge{m, {}, true};
    LOOPR_ASSIGN(m, r.merge(branch, integration, message));
  }
  std::vector<std::string> conflicts = m.conflicts;
  return IntegrationMerge{std::move(m), std::move(conflicts)};
}

Result<std::vector<HeldPath>> LoopWorktrees::held_changes(const std::string& plan_id,
                                                          const std::string& base_branch,
                                                          const MergeRules& rules) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  return r.merge_findings(base_branch, integration_branch(plan_id), rules);
}

Result<MergeOutcome> LoopWorktrees::merge_plan_into_base(const std::string& plan_id,
                                                         const std::string& base_branch,
                                                         const std::string& message) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  return r.merge(integration_branch(plan_id), base_branch, message);
}

namespace {
std::string gate_name(const std::string& plan_id) { return plan_id + "-gate"; }
std::string baseline_name(const std::string& plan_id) { return plan_id + "-baseline"; }
}  // namespace

Result<void> LoopWorktrees::remove_scratch(const std::string& name) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  auto removed = r.remove_worktree(name, RemoveMode::force);
  if (!removed && removed.error().code != ErrorCode::not_found) return removed;
  LOOPR_TRY(r.drop_broken_worktree_registration(name));
  std::error_code ec;
  std::filesystem::remove_all(paths_.worktree(name), ec);  // a folder git no longer knows
  if (ec)
    return make_error(ErrorCode::io,
                      "cannot remove " + paths_.worktree(name).string() + ": " + ec.message());
  auto deleted = r.delete_branch("loopr/" + name);
  if (!deleted && deleted.error().code != ErrorCode::not_found) return deleted;
  return ok();
}

Result<GateCheckout> LoopWorktrees::prepare_scratch(const std::string& name,
                                                    const std::string& start) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  // A daemon killed while it made or removed this checkout leaves git's locks of its branch and
  // record: nothing else writes them (one check of a name at a time, one daemon per repository).
  auto stale = r.remove_stale_locks({"loopr/" + name}, {name});
  if (stale)
    for (const auto& file : *stale) spdlog::warn("removed the stale git lock {}", file);
  LOOPR_TRY(remove_scratch(name));
  LOOPR_ASSIGN(std::string sha, r.create_branch("loopr/" + name, start));
  LOOPR_ASSIGN(Worktree wt, r.add_worktree(name, "loopr/" + name));
  return GateCheckout{wt.path().string(), sha};
}

Result<void> LoopWorktrees::remove_gate(const std::string& plan_id) const {
  return remove_scratch(gate_name(plan_id));
}

Result<GateCheckout> LoopWorktrees::prepare_gate(const std::string& plan_id) const {
  return prepare_scratch(gate_name(plan_id), integration_branch(plan_id));
}

Result<GateCheckout> LoopWorktrees::prepare_baseline(const std::string& plan_id) const {
  return prepare_scratch(baseline_name(plan_id), integration_branch(plan_id));
}

Result<void> LoopWorktrees::remove_baseline(const std::string& plan_id) const {
  return remove_scratch(baseline_name(plan_id));
}

Result<MergeOutcome> LoopWorktrees::update_from_base(const std::string& plan_id,
                                                     const std::string& base_branch,
                                                     const std::string& message) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  return r.merge(base_branch, integration_branch(plan_id), message);
}

Result<void> LoopWorktrees::retire(const std::string& loop_id) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  auto removed = r.remove_worktree(loop_id, RemoveMode::refuse_if_dirty);
  if (!removed && removed.error().code == ErrorCode::not_found)
    set_aside_if_stray(r, paths_, loop_id);
  return removed;
}

Result<std::string> LoopWorktrees::archive(const std::string& loop_id,
                                           const std::string& message) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  auto archived = r.archive_worktree(loop_id, message);
  if (archived) return archived->branch;
  if (archived.error().code == ErrorCode::not_found) return std::string();
  return archived.take_error();
}

bool LoopWorktrees::folder_exists(const std::string& worktree) const {
  std::error_code ec;
  return !worktree.empty() && std::filesystem::exists(worktree, ec);
}

Result<bool> LoopWorktrees::checkpoint(const std::string& worktree,
                                       const std::string& message) const {
  LOOPR_ASSIGN(CommitOutcome out, Worktree::checkpoint_at(worktree, message));
  return out.kind == CommitOutcome::Kind::committed;
}

Result<std::string> LoopWorktrees::read_artifact(const Loop& loop, std::size_t max_bytes) const {
  if (loop.output_artifacts.empty())
    return make_error(ErrorCode::invalid_argument, "loop " + loop.id + " has no artifact");
  // The one reader (git/artifact.hpp): never through a symlink or special file the model left in
  // the worktree. One byte past the limit tells the caller the artifact is too large.
  ArtifactText text = read_loop_artifact(
      {paths_.root, loop.worktree, loop.output_artifacts.front(), artifact_branches(loop)},
      max_bytes + 1);
  if (!text.worktree_problem.empty())
    spdlog::warn("loop {}: {} (read as committed instead)", loop.id, text.worktree_problem);
  if (!text.bytes) return make_error(ErrorCode::not_found, text.problem);
  return std::move(*text.bytes);
}

Result<std::vector<std::string>> LoopWorktrees::clear_locks(std::span<const Loop> loops) const {
  std::set<std::string> branches, worktrees;
  for (const Loop& l : loops) {
    branches.insert(branch_of(l));
    branches.insert(archive_branch(l.id));
    branches.insert(integration_branch(l.plan_id));
    worktrees.insert(l.id);
  }
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  LOOPR_ASSIGN(std::vector<std::string> removed,
               r.remove_stale_locks({branches.begin(), branches.end()},
                                    {worktrees.begin(), worktrees.end()}));
  for (const auto& file : removed) spdlog::warn("recovery: removed the stale git lock {}", file);
  return removed;
}

Result<std::vector<std::string>> LoopWorktrees::set_aside_strays(
    const std::set<std::string>& may_have_folder) const {
  LOOPR_ASSIGN(Repository r, Repository::open(paths_.root));
  std::vector<std::string> moved;
  std::error_code ec;
  std::vector<std::string> ids;
  for (auto it = std::filesystem::directory_iterator(paths_.worktrees_dir(), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ids.push_back(it->path().filename().string());
  for (const auto& id : ids)
    if (!may_have_folder.count(id) && set_aside_if_stray(r, paths_, id)) moved.push_back(id);
  return moved;
}

}  // namespace loopr::git
