// The journal: the one path by which the engine, the manager and the daemon change the store.
// A change is stored first (on the thread pool, one atomic write) and only then published to
// the live listeners (the SSE streams, the loop logs): nobody ever sees an event that a crash
// could take back. Loads are here too, so a coroutine never touches RocksDB on the io thread.
//
// Use on the io thread of the coroutines (publishing happens there); blocking work goes to
// `pool`. Records carry the version they were read at: a write based on an old version fails
// with ErrorCode::conflict, and `edit`/`edit_tree` load again and retry.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <loopr/api/transition.hpp>
#include <loopr/core/event.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/engine/event_bus.hpp>
#include <loopr/net/asio.hpp>
#include <loopr/store/task_store.hpp>

namespace loopr::engine {

/// The one status change (api/transition.hpp).
using api::transition;

class LoopJournal {
 public:
  LoopJournal(TaskStore& store, net::thread_pool& pool, EventBus& bus)
      : store_(store), pool_(pool), bus_(bus) {}

  /// For reads the calls below do not cover (listings, iterations, events), on a pool.
  TaskStore& store() const { return store_; }
  EventBus& bus() const { return bus_; }

  awaitable<Result<Loop>> load(std::string id);
  /// Every loop of a plan's tree (the plan first).
  awaitable<Result<std::vector<Loop>>> tree(std::string plan_id);
  /// Every loop in the store.
  awaitable<Result<std::vector<Loop>>> all();

  /// Stores `set` durably, then publishes its events. The WriteResult has the stored loops (new
  /// versions) and the numbered events.
  awaitable<Result<WriteResult>> commit(WriteSet set);
  /// Stores `loop` as it is (compare-and-set at its version) with `events`; the stored loop.
  awaitable<Result<Loop>> save(Loop loop, std::vector<Event> events = {});
  /// `transition` + `save`.
  awaitable<Result<Loop>> save_status(Loop loop, LoopStatus to, EndReason end,
                                      std::string reason, std::vector<Event> events = {});

  /// Edits loop `id`: loads it, lets `change` edit it and add to the write (events, approvals,
  /// loops to create), stores the loop with them; loads and edits again when someone wrote the
  /// loop in between. `change` returns an Error to give up without writing.
  using Edit = std::function<std::optional<Error>(Loop& loop, WriteSet& more)>;
  awaitable<Result<Loop>> edit(std::string id, Edit change);
  /// `edit` from `held`, the record as the caller last loaded or stored it: no read when nobody
  /// wrote the loop since (the write's compare-and-set at its version says so). When the write
  /// finds a newer version, or `change` refuses the held record (it may be out of date), the
  /// loop is loaded and edited again as above.
  awaitable<Result<Loop>> edit(Loop held, Edit change);

  /// The same for several loops of one plan's tree: `change` gets every loop of the tree and
  /// puts the ones it changed into `out.updates` itself.
  using TreeEdit = std::function<std::optional<Error>(std::vector<Loop>& tree, WriteSet& out)>;
  awaitable<Result<WriteResult>> edit_tree(std::string plan_id, TreeEdit change);

  /// Frequent, low-value events (iteration_started, tool_called, llm_retry): stored without an
  /// fdatasync (a process crash keeps them, a power cut may lose them), then published.
  awaitable<void> note(std::vector<Event> events);

  /// A small durable meta value written at once, from any thread (the provider's 429 pause:
  /// durable before any retry is made).
  Result<void> put_meta(const std::string& key, const std::string& value);
  /// The next plan number (TaskStore::next_plan_number); blocking, for the pool.
  Result<int> next_plan_number();

 private:
  using Loader = std::function<awaitable<Result<std::vector<Loop>>>()>;
  awaitable<Result<WriteResult>> edit_loops(Loader load, TreeEdit change, std::string what);
  awaitable<Result<std::vector<Loop>>> load_one(std::string id);

  TaskStore& store_;
  net::thread_pool& pool_;
  EventBus& bus_;
};

}  // namespace loopr::engine
