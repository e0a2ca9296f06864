// Counts how often one loop's record is read and written in one TaskStore: how a test proves
// that a step passes the record it holds along instead of reading it again (issue 44 R4: an
// approval reads its plan at most twice). Kept out of task_store.hpp so that watching costs no
// rebuild of its includers; when nothing is watched a record read costs one relaxed atomic load.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace loopr {

class TaskStore;
struct Loop;

struct RecordCounts {
  std::size_t reads = 0;   ///< records decoded for a caller (get_loop, a tree or a listing)
  std::size_t writes = 0;  ///< atomic writes that stored the record (create or update)
  std::size_t listed = 0;  ///< copies of its summary a listing handed out (list_loop_summaries)
};

/// Starts counting loop `id` in `store` from zero (one loop per store; a second call restarts).
void watch_record(const TaskStore& store, const std::string& id);
/// What was counted since watch_record (zeros when `store` is not watched).
RecordCounts record_counts(const TaskStore& store);
/// Stops counting in `store`.
void unwatch_record(const TaskStore& store);

namespace store_detail {
/// Called by the store (task_store.cpp): a record of loop `id` was read, or written.
void note_record_read(const TaskStore& store, std::string_view id);
void note_record_write(const TaskStore& store, std::string_view id);
/// A listing handed out `summaries`: counts the watched loop's among them.
void note_summaries_listed(const TaskStore& store, const std::vector<Loop>& summaries);
}  // namespace store_detail

}  // namespace loopr
