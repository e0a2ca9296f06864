// Diff comments stored with their loop (comments.hpp).
#include "daemon/comments.hpp"

#include <algorithm>
#include <mutex>

#include <loopr/core/text.hpp>

namespace loopr::daemon {
namespace {

// Adds and marks read, change and write one loop's list: one at a time.
std::mutex& writes() {
  static std::mutex m;
  return m;
}

std::string key_of(const std::string& loop_id) { return "comments/" + loop_id; }

Result<void> store_comments(TaskStore& store, const std::string& loop_id,
                            const std::vector<api::DiffComment>& list) {
  api::CommentsView v{list};
  return store.put_meta(key_of(loop_id), json_text(api::to_json(v)));
}

}  // namespace

Result<std::vector<api::DiffComment>> load_comments(const TaskStore& store,
                                                    const std::string& loop_id) {
  LOOPR_ASSIGN(auto text, store.get_meta(key_of(loop_id)));
  if (!text) return std::vector<api::DiffComment>{};
  auto j = nlohmann::json::parse(*text, nullptr, false);
  return api::comments_from_json(j).comments;
}

Result<api::DiffComment> add_comment(TaskStore& store, const std::string& loop_id,
                                     api::DiffComment c, TimestampMs now) {
  auto bad = [](std::string what) { return make_error(ErrorCode::invalid_argument, what); };
  if (c.file.empty() || c.file.size() > api::kMaxCommentFileBytes)
    return bad("a comment needs the `file` it is on (at most 4096 bytes)");
  if (c.line < 1) return bad("a comment needs the `line` it is on (a number from 1)");
  if (c.text.find_first_not_of(" \t\r\n") == std::string::npos)
    return bad("a comment needs its `text` (what to change on that line)");
  if (c.text.size() > api::kMaxCommentBytes)
    return bad("a comment's text is longer than 16 KiB (say it shorter)");
  c.file = valid_utf8(c.file);
  c.text = valid_utf8(c.text);
  std::lock_guard lock(writes());
  LOOPR_ASSIGN(auto list, load_comments(store, loop_id));
  if (list.size() >= api::kMaxCommentsPerLoop)
    return bad("the loop holds 500 comments already (send them with an iterate first)");
  c.n = list.empty() ? 1 : list.back().n + 1;
  c.created_at = now;
  c.iteration = 0;
  list.push_back(c);
  LOOPR_TRY(store_comments(store, loop_id, list));
  return c;
}

Result<void> mark_comments_sent(TaskStore& store, const std::string& loop_id,
                                const std::vector<int>& ns, int iteration) {
  std::lock_guard lock(writes());
  LOOPR_ASSIGN(auto list, load_comments(store, loop_id));
  for (auto& c : list)
    if (c.iteration == 0 && std::find(ns.begin(), ns.end(), c.n) != ns.end())
      c.iteration = iteration;
  return store_comments(store, loop_id, list);
}

}  // namespace loopr::daemon
