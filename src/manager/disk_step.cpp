// A full disk (limits.min_free_space): a loop that found too little space before an iteration,
// or whose write failed with ENOSPC, is paused with end_reason `disk_full` (engine/loop_runner).
// The daemon looks every few seconds; once the repository's file system (and the loop's
// worktree's) has the floor free again, those loops go on by themselves. `loopr resume` does the
// same at once.
#include <spdlog/spdlog.h>

#include <loopr/core/disk.hpp>

#include "manager/driver.hpp"

namespace loopr::manager {

awaitable<DiskStatus> watch_disk(State s) {
  std::shared_ptr<const Config> config = s->ctx.config;
  DiskStatus d;
  d.dir = s->ctx.paths.root.string();
  d.floor = config->limits.min_free_space;
  TaskStore& store = s->journal.store();
  auto look = [&]() -> Result<std::vector<Loop>> {
    d.free = free_bytes(s->ctx.paths.root);
    // The counts come from memory once the loops were listed: no scan while nothing is paused.
    auto counts = store.count_by_status();
    if (counts && !counts->count(LoopStatus::paused)) return std::vector<Loop>{};
    return store.loops_with_status(LoopStatus::paused);
  };
  auto paused = co_await run_blocking(s->ctx.pool, look);
  if (!paused) co_return d;
  std::vector<Loop> waiting;
  for (Loop& l : *paused)
    if (l.end_reason == EndReason::disk_full) waiting.push_back(std::move(l));
  d.paused = waiting.size();
  if (waiting.empty() || d.full() || s->stopping || s->draining) co_return d;
  // The store may have stopped taking writes when it hit the full disk (RocksDB recovers by
  // itself too; asking does no harm).
  co_await run_blocking(s->ctx.pool, [&store] { (void)store.resume_writes(); });
  for (const Loop& w : waiting) {
    if (s->runs.has(w.id)) continue;
    auto worktree_free = co_await run_blocking(s->ctx.pool, [&w] {
      return w.worktree.empty() ? std::optional<std::uint64_t>() : free_bytes(w.worktree);
    });
    if (worktree_free && d.floor > 0 && *worktree_free < d.floor) continue;
    auto stored = co_await s->journal.edit(w.id, [](Loop& l, WriteSet& ws) -> std::optional<Error> {
      if (l.status != LoopStatus::paused || l.end_reason != EndReason::disk_full)
        return not_allowed(l, "it no longer waits for disk space");
      if (!engine::transition(l, LoopStatus::pending, EndReason::none,
                              "resumed: there is disk space again", ws.events))
        return not_allowed(l, "cannot resume");
      return std::nullopt;
    });
    if (!stored) continue;
    spdlog::info("loop {}: resumed, there is disk space again", w.id);
    spawn_run(s, w.id);
    ++d.resumed;
  }
  co_return d;
}

}  // namespace loopr::manager
