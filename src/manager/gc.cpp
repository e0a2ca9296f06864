// `loopr gc`'s decisions (which trees and loops qualify) and the whole run on a store this
// process holds; the removals themselves are in gc_clean.cpp, the daemon's run in gc_step.cpp.
#include <algorithm>
#include <map>

#include <loopr/api/events.hpp>
#include <loopr/engine/event_bus.hpp>
#include <loopr/manager/gc.hpp>

#include <loopr/api/maintenance.hpp>
#include <loopr/manager/tree_verdict.hpp>

namespace loopr::manager {

GcOptions GcOptions::from(const Config& config, TimestampMs now) {
  GcOptions o;
  o.older_than = config.gc.older_than;
  o.keep_archived = config.gc.keep_archived;
  o.now = now;
  return o;
}

void GcReport::add(GcReport&& more) {
  for (auto& i : more.items) items.push_back(std::move(i));
  for (auto& c : more.changes) changes.push_back(std::move(c));
  for (auto& e : more.errors) errors.push_back(std::move(e));
  bytes_freed += more.bytes_freed;
}

nlohmann::json to_json(const GcReport& r) {
  api::GcView v;
  v.dry_run = r.dry_run;
  for (const GcItem& i : r.items) {
    v.removed.push_back({i.kind, i.name, i.action, i.reason, i.kept_on, i.loop_id, i.bytes});
    using api::GcAction, api::GcKind;
    v.worktrees += i.kind == GcKind::worktree;
    v.branches_deleted += i.kind == GcKind::branch && i.action == GcAction::deleted;
    v.branches_archived += i.kind == GcKind::branch && i.action == GcAction::archived;
    if (i.kind == GcKind::logs) ++v.logs, v.logs_bytes += i.bytes;
  }
  v.errors = r.errors;
  v.bytes_freed = r.bytes_freed;
  return api::to_json(v);
}

std::vector<GcTarget> gc_targets(std::span<const Loop> loops, const GcOptions& options,
                                 MergeMode mode, const std::string& default_base) {
  std::map<std::string, std::vector<Loop>> trees;
  for (const Loop& l : loops) trees[l.plan_id].push_back(l);
  std::vector<GcTarget> out;
  for (auto& [plan_id, tree] : trees) {
    const Loop* plan = nullptr;
    TimestampMs last = 0;
    for (const Loop& l : tree) {
      last = std::max(last, l.updated_at);
      if (l.id == plan_id) plan = &l;
    }
    if (!plan) continue;  // a tree without its plan record is not one loopr knows whole
    GcTarget t;
    t.plan_id = plan_id;
    t.base_branch = plan->tree.base_branch.empty() ? default_base : plan->tree.base_branch;
    TreeVerdict v = tree_verdict(tree, plan_id, mode);
    // Ended: nothing more happens without a person, and nothing waits for one but a manual
    // merge (which needs the integration branch only, and that is kept until merged).
    bool ended = v == TreeVerdict::merged || v == TreeVerdict::failed || v == TreeVerdict::complete;
    t.ended = ended && options.now - last >= options.older_than.count();
    for (const Loop& l : tree) {
      bool settled_invalidated = l.status == LoopStatus::invalidated &&
                                 options.now - l.updated_at >= options.older_than.count();
      if (t.ended || settled_invalidated) t.loops.push_back(l);
    }
    if (t.ended || !t.loops.empty()) out.push_back(std::move(t));
  }
  return out;
}

void apply_gc_changes(std::vector<Loop>& tree, const std::string& plan_id, const GcReport& report,
                      WriteSet& out, std::vector<std::string>& errors) {
  // The loops did nothing: "when did it last change" stays theirs (stats, gc's own ages).
  out.touch = false;
  for (const GcLoopChange& c : report.changes) {
    auto it =
        std::find_if(tree.begin(), tree.end(), [&](const Loop& l) { return l.id == c.loop_id; });
    if (it == tree.end()) continue;
    if (!is_terminal(it->status)) {
      errors.push_back("loop " + c.loop_id +
                       " started again while gc ran: its record still names " +
                       "its old worktree; its commits are on " +
                       (c.branch.empty() ? std::string("its merge target") : c.branch));
      continue;
    }
    it->worktree = c.worktree;
    it->branch = c.branch;
    out.updates.push_back(*it);
  }
  if (report.items.empty()) return;
  api::GcDone done;
  for (const GcItem& i : report.items)
    done.removed.push_back(std::string(api::to_string(i.action)) + " " + api::to_string(i.kind) +
                           " " + i.name);
  done.bytes_freed = report.bytes_freed;
  out.events.push_back(api::encode(plan_id, done));
}

Result<GcReport> gc_store(TaskStore& store, const RepoPaths& paths, const GcOptions& options,
                          const Config& config) {
  LOOPR_ASSIGN(std::vector<Loop> loops, store.list_loops());
  GcReport all;
  all.dry_run = options.dry_run;
  for (const GcTarget& t : gc_targets(loops, options, config.merge, config.base_branch)) {
    GcReport part = clean_target(paths, t, options);
    if (!options.dry_run && (!part.items.empty() || !part.changes.empty())) {
      LOOPR_ASSIGN(std::vector<Loop> tree, store.loops_of_plan(t.plan_id));
      WriteSet w;
      apply_gc_changes(tree, t.plan_id, part, w, part.errors);
      if (auto stored = store.apply(std::move(w)); !stored)
        part.errors.push_back("plan " + t.plan_id + ": " + stored.error().message);
    }
    all.add(std::move(part));
  }
  std::set<std::string> ids;
  for (const Loop& l : loops) ids.insert(l.id);
  all.add(clean_leftovers(paths, ids, options));
  return all;
}

}  // namespace loopr::manager
