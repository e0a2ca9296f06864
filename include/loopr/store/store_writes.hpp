// Single-purpose writes over TaskStore::apply, for tests and benchmarks. loopr itself changes
// loops only through engine::LoopJournal, one WriteSet per step (a loop's new state, its
// iteration record and its events in one atomic write); these are the same write, one part
// at a time.
#pragma once

#include <utility>
#include <vector>

#include <loopr/store/task_store.hpp>

namespace loopr {

/// Stores a new loop (version 1, created_at/updated_at set if zero). already_exists if there.
inline Result<Loop> create_loop(TaskStore& store, Loop loop) {
  WriteSet set;
  set.creates.push_back(std::move(loop));
  LOOPR_ASSIGN(WriteResult r, store.apply(std::move(set)));
  return r.loops.front();
}

/// Compare-and-set: `loop.version` must be the stored version, else ErrorCode::conflict.
inline Result<Loop> update_loop(TaskStore& store, const Loop& loop) {
  WriteSet set;
  set.updates.push_back(loop);
  LOOPR_ASSIGN(WriteResult r, store.apply(std::move(set)));
  return r.loops.front();
}

/// The loop's new state (CAS) and its iteration record (+ events) in ONE atomic write.
inline Result<Loop> commit_iteration(TaskStore& store, const Loop& loop,
                                     const IterationRecord& record,
                                     std::vector<Event> events = {}) {
  WriteSet set;
  set.updates.push_back(loop);
  set.iterations.push_back(record);
  set.events = std::move(events);
  LOOPR_ASSIGN(WriteResult r, store.apply(std::move(set)));
  return r.loops.front();
}

/// The events as stored, numbered.
inline Result<std::vector<Event>> append_events(TaskStore& store, std::vector<Event> events) {
  WriteSet set;
  set.events = std::move(events);
  LOOPR_ASSIGN(WriteResult r, store.apply(std::move(set)));
  return r.events;
}

inline Result<void> put_approval(TaskStore& store, const Approval& approval) {
  WriteSet set;
  set.approvals.push_back(approval);
  LOOPR_TRY(store.apply(std::move(set)));
  return ok();
}

}  // namespace loopr
