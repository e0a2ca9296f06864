// The record probe (record_probe.hpp): a small table of watched stores under a mutex, entered
// only once something is watched.
#include <atomic>
#include <map>
#include <mutex>
#include <string_view>

#include <loopr/core/loop.hpp>
#include <loopr/store/record_probe.hpp>

namespace loopr {
namespace {

struct Watch {
  std::string id;
  RecordCounts counts;
};

std::atomic<int> watched{0};  // how many stores are watched: the fast path's only cost
std::mutex mutex;
std::map<const TaskStore*, Watch>& table() {
  static std::map<const TaskStore*, Watch> t;
  return t;
}

template <typename Count>
void note(const TaskStore& store, std::string_view id, Count count) {
  if (watched.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lock(mutex);
  auto it = table().find(&store);
  if (it != table().end() && it->second.id == id) count(it->second.counts);
}

}  // namespace

void watch_record(const TaskStore& store, const std::string& id) {
  std::lock_guard lock(mutex);
  auto [it, added] = table().insert_or_assign(&store, Watch{id, {}});
  (void)it;
  if (added) watched.fetch_add(1);
}

RecordCounts record_counts(const TaskStore& store) {
  std::lock_guard lock(mutex);
  auto it = table().find(&store);
  return it == table().end() ? RecordCounts{} : it->second.counts;
}

void unwatch_record(const TaskStore& store) {
  std::lock_guard lock(mutex);
  if (table().erase(&store) > 0) watched.fetch_sub(1);
}

namespace store_detail {

void note_record_read(const TaskStore& store, std::string_view id) {
  note(store, id, [](RecordCounts& c) { ++c.reads; });
}

void note_record_write(const TaskStore& store, std::string_view id) {
  note(store, id, [](RecordCounts& c) { ++c.writes; });
}

void note_summaries_listed(const TaskStore& store, const std::vector<Loop>& summaries) {
  if (watched.load(std::memory_order_relaxed) == 0) return;
  for (const Loop& l : summaries) note(store, l.id, [](RecordCounts& c) { ++c.listed; });
}

}  // namespace store_detail
}  // namespace loopr
