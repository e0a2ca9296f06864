// `loopr gc` in the daemon (POST /v1/gc, and `gc.every`): the same decisions and removals as on a
// store the CLI holds (gc.cpp, gc_clean.cpp), tree by tree under that plan's lock, so no
// completion, failure or user action of that tree runs meanwhile, and never on a loop that has a
// run.
#include <spdlog/spdlog.h>

#include "manager/driver.hpp"

namespace loopr::manager {

awaitable<GcReport> gc(State s, GcOptions options) {
  GcReport all;
  all.dry_run = options.dry_run;
  auto loops = co_await s->journal.all();
  if (!loops) {
    all.errors.push_back("reading the store: " + loops.error().message);
    co_return all;
  }
  const std::string base = s->ctx.config->base_branch;
  const MergeMode mode = s->ctx.config->merge;
  for (const GcTarget& first_look : gc_targets(*loops, options, mode, base)) {
    if (s->stopping) break;
    auto guard = co_await s->plan_locks.lock(first_look.plan_id);
    // The tree as it is now, under the lock: it may have been resumed or iterated meanwhile.
    auto tree = co_await s->journal.tree(first_look.plan_id);
    if (!tree) continue;
    std::optional<GcTarget> now;
    for (GcTarget& t : gc_targets(*tree, options, mode, base))
      if (t.plan_id == first_look.plan_id) now = std::move(t);
    if (!now) continue;
    std::erase_if(now->loops, [&](const Loop& l) { return s->runs.has(l.id); });
    if (now->ended && s->runs.any_of_plan(now->plan_id)) now->ended = false;
    const RepoPaths& paths = s->ctx.paths;
    GcTarget& target = *now;
    GcReport part = co_await run_blocking(
        s->ctx.pool, [&paths, &target, &options] { return clean_target(paths, target, options); });
    if (!options.dry_run && (!part.items.empty() || !part.changes.empty())) {
      std::vector<std::string> notes;
      auto stored = co_await s->journal.edit_tree(
          target.plan_id, [&](std::vector<Loop>& fresh, WriteSet& w) -> std::optional<Error> {
            notes.clear();
            apply_gc_changes(fresh, target.plan_id, part, w, notes);
            return std::nullopt;
          });
      for (auto& n : notes) part.errors.push_back(std::move(n));
      if (!stored) part.errors.push_back("plan " + target.plan_id + ": " + stored.error().message);
    }
    all.add(std::move(part));
  }
  std::set<std::string> ids;
  for (const Loop& l : *loops) ids.insert(l.id);
  const RepoPaths& paths = s->ctx.paths;
  GcReport rest = co_await run_blocking(
      s->ctx.pool, [&paths, &ids, &options] { return clean_leftovers(paths, ids, options); });
  all.add(std::move(rest));
  if (!options.dry_run && (!all.items.empty() || !all.errors.empty()))
    spdlog::info("gc: {} removed, {} bytes freed, {} not done", all.items.size(), all.bytes_freed,
                 all.errors.size());
  co_return all;
}

}  // namespace loopr::manager
