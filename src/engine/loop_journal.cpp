#include <loopr/engine/loop_journal.hpp>

#include <loopr/api/events.hpp>

namespace loopr::engine {
namespace {

// How often an edit is tried before a loop that keeps changing under it wins. A run writes its
// loop about once per iteration, so a second try nearly always succeeds.
constexpr int kEditAttempts = 8;

}  // namespace

awaitable<Result<Loop>> LoopJournal::load(std::string id) {
  auto get = [this, &id] { return store_.get_loop(id); };
  co_return co_await run_blocking(pool_, get);
}

awaitable<Result<std::vector<Loop>>> LoopJournal::tree(std::string plan_id) {
  auto get = [this, &plan_id] { return store_.loops_of_plan(plan_id); };
  co_return co_await run_blocking(pool_, get);
}

awaitable<Result<std::vector<Loop>>> LoopJournal::all() {
  auto get = [this] { return store_.list_loops(); };
  co_return co_await run_blocking(pool_, get);
}

awaitable<Result<WriteResult>> LoopJournal::commit(WriteSet set) {
  auto apply = [this, &set] { return store_.apply(std::move(set)); };
  auto stored = co_await run_blocking(pool_, apply);
  if (stored) bus_.publish(stored->events);
  co_return stored;
}

awaitable<Result<Loop>> LoopJournal::save(Loop loop, std::vector<Event> events) {
  WriteSet set;
  set.updates.push_back(std::move(loop));
  set.events = std::move(events);
  auto stored = co_await commit(std::move(set));
  if (!stored) co_return stored.take_error();
  co_return std::move(stored->loops.front());
}

awaitable<Result<Loop>> LoopJournal::save_status(Loop loop, LoopStatus to, EndReason end,
                                                 std::string reason, std::vector<Event> events) {
  if (auto moved = transition(loop, to, end, std::move(reason), events); !moved)
    co_return moved.take_error();
  co_return co_await save(std::move(loop), std::move(events));
}

// The one compare-and-set retry: load, change, commit; again when a loop changed meanwhile.
awaitable<Result<WriteResult>> LoopJournal::edit_loops(Loader load, TreeEdit change,
                                                       std::string what) {
  for (int attempt = 0; attempt < kEditAttempts; ++attempt) {
    auto loops = co_await load();
    if (!loops) co_return loops.take_error();
    WriteSet set;
    if (std::optional<Error> refused = change(*loops, set)) co_return std::move(*refused);
    auto stored = co_await commit(std::move(set));
    if (stored || stored.error().code != ErrorCode::conflict) co_return stored;
  }
  co_return make_error(ErrorCode::conflict, what + " kept changing; try again");
}

awaitable<Result<std::vector<Loop>>> LoopJournal::load_one(std::string id) {
  auto loaded = co_await load(std::move(id));
  if (!loaded) co_return loaded.take_error();
  co_return std::vector<Loop>{std::move(*loaded)};
}

awaitable<Result<Loop>> LoopJournal::edit(std::string id, Edit change) {
  auto load = [this, id] { return load_one(id); };
  auto one = [&change](std::vector<Loop>& loops, WriteSet& set) -> std::optional<Error> {
    if (std::optional<Error> refused = change(loops.front(), set)) return refused;
    set.updates.push_back(std::move(loops.front()));
    return std::nullopt;
  };
  auto stored = co_await edit_loops(load, one, "loop " + id);
  if (!stored) co_return stored.take_error();
  co_return std::move(stored->loops.back());  // the edited loop is the last update
}

awaitable<Result<Loop>> LoopJournal::edit(Loop held, Edit change) {
  std::string id = held.id;
  WriteSet set;
  if (!change(held, set)) {
    set.updates.push_back(std::move(held));
    auto stored = co_await commit(std::move(set));
    if (stored) co_return std::move(stored->loops.back());
    if (stored.error().code != ErrorCode::conflict) co_return stored.take_error();
  }
  co_return co_await edit(std::move(id), std::move(change));
}

awaitable<Result<WriteResult>> LoopJournal::edit_tree(std::string plan_id, TreeEdit change) {
  auto load = [this, plan_id] { return tree(plan_id); };
  co_return co_await edit_loops(load, std::move(change), "the tree of plan " + plan_id);
}

awaitable<void> LoopJournal::note(std::vector<Event> events) {
  WriteSet set;
  set.events = std::move(events);
  set.durable = false;
  co_await commit(std::move(set));
}

Result<void> LoopJournal::put_meta(const std::string& key, const std::string& value) {
  return store_.put_meta(key, value);
}

Result<int> LoopJournal::next_plan_number() { return store_.next_plan_number(); }

}  // namespace loopr::engine
