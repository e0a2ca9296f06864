// The diff comments of a loop, stored with it (the store's meta keys `comments/<loop id>`, one
// JSON list per loop): they survive a daemon restart and say which iteration took them. Blocking
// (the store); one writer at a time.
#pragma once

#include <string>
#include <vector>

#include <loopr/api/comments.hpp>
#include <loopr/core/result.hpp>
#include <loopr/store/task_store.hpp>

namespace loopr::daemon {

/// Every comment of `loop_id`, oldest first (none: empty).
Result<std::vector<api::DiffComment>> load_comments(const TaskStore& store,
                                                    const std::string& loop_id);

/// Checks `c` (file, line, side, text within api's limits) and stores it as the loop's next
/// comment, not sent yet. invalid_argument: what is wrong with it.
Result<api::DiffComment> add_comment(TaskStore& store, const std::string& loop_id,
                                     api::DiffComment c, TimestampMs now);

/// Marks comments `ns` of the loop as taken by iteration `iteration`.
Result<void> mark_comments_sent(TaskStore& store, const std::string& loop_id,
                                const std::vector<int>& ns, int iteration);

}  // namespace loopr::daemon
