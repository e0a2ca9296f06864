// The control API's routes about the comments a person writes on lines of a loop's diff, and
// the iterate that sends them as one iteration's feedback.
#include <spdlog/spdlog.h>

#include <loopr/api/comments.hpp>
#include <loopr/daemon/http_common.hpp>

#include "daemon/api_routes.hpp"
#include "daemon/comments.hpp"

namespace loopr::daemon {

namespace {

/// Holds a loop's comment send while it lives (Api::State::sending); `held()` false: another
/// request sends them now.
class CommentSend {
 public:
  CommentSend(Api::State& s, std::string id) : s_(s), id_(std::move(id)) {
    std::lock_guard lock(s_.sending_mu);
    held_ = s_.sending.insert(id_).second;
  }
  ~CommentSend() {
    if (!held_) return;
    std::lock_guard lock(s_.sending_mu);
    s_.sending.erase(id_);
  }
  CommentSend(const CommentSend&) = delete;
  CommentSend& operator=(const CommentSend&) = delete;
  bool held() const { return held_; }

 private:
  Api::State& s_;
  std::string id_;
  bool held_ = false;
};

}  // namespace

// POST /v1/loops/{id}/iterate {feedback, comments}: the feedback and, with `comments`, the
// loop's pending diff comments after it, as ONE iteration's feedback; the comments then name the
// iteration that took them.
awaitable<Response> iterate_action(Api::State& s, const std::string& id, api::IterateRequest r) {
  std::vector<int> sent;
  // Single flight per loop, from reading the pending comments to marking them sent: a second
  // send meanwhile (a double click, two tabs) would read the same ones and send them again.
  std::optional<CommentSend> flight;
  if (r.comments) {
    flight.emplace(s, id);
    if (!flight->held())
      co_return error_response(409, "loop " + id +
                                        "'s comments are being sent by another request (reload "
                                        "the page to see which iteration took them)");
    auto load = [&s, &id] { return load_comments(s.ctx.journal.store(), id); };
    auto all = co_await run_blocking(s.reads(), load);
    if (!all) co_return error_of(all.error());
    std::vector<api::DiffComment> pending;
    for (const auto& c : *all)
      if (c.iteration == 0) {
        pending.push_back(c);
        sent.push_back(c.n);
      }
    if (pending.empty())
      co_return error_response(409, "loop " + id + " has no comments waiting to be sent");
    const std::string said = api::comments_feedback(pending);
    r.feedback = r.feedback.find_first_not_of(" \t\r\n") == std::string::npos
                     ? said
                     : r.feedback + "\n\n" + said;
  }
  if (r.feedback.find_first_not_of(" \t\r\n") == std::string::npos)
    co_return error_response(400,
                             "the body needs a non-empty string field `feedback` (what to change)");
  manager::ActionResult result = co_await s.manager.iterate(id, r.feedback);
  if (!result) co_return error_of(result.error());
  if (!sent.empty()) {
    const int next = result->iteration + 1;
    auto mark = [&s, &id, &sent, next] {
      return mark_comments_sent(s.ctx.journal.store(), id, sent, next);
    };
    auto marked = co_await run_blocking(s.reads(), mark);
    if (!marked) spdlog::warn("loop {}: marking its comments sent: {}", id, marked.error().message);
  }
  co_return Response{200, loop_json(*result)};
}

// GET /v1/loops/{id}/comments: the loop's diff comments, oldest first, with the iteration that
// took each (null: not sent yet).
awaitable<Response> get_comments(Api::State& s, Request&, const Params& p) {
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return error_response(404, "no loop " + id + " (see `loopr list --all`)");
  auto load = [&s, &id]() -> Result<std::vector<api::DiffComment>> {
    LOOPR_TRY(s.ctx.journal.store().get_loop(id));
    return load_comments(s.ctx.journal.store(), id);
  };
  auto got = co_await run_blocking(s.reads(), load);
  if (!got) co_return error_of(got.error());
  co_return Response{200, api::to_json(api::CommentsView{std::move(*got)})};
}

// POST /v1/loops/{id}/comments {file, line, side, text}: a comment on a line of the loop's diff,
// kept until an `iterate` with `comments` sends it.
awaitable<Response> post_comment(Api::State& s, Request& req, const Params& p) {
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return error_response(404, "no loop " + id + " (see `loopr list --all`)");
  Response bad;
  auto r = read_body(req, api::comment_request_from_json, bad);
  if (!r) co_return bad;
  api::DiffComment c;
  c.file = std::move(r->file);
  c.line = r->line;
  c.side = r->side;
  c.text = std::move(r->text);
  auto add = [&s, &id, c]() -> Result<api::DiffComment> {
    LOOPR_TRY(s.ctx.journal.store().get_loop(id));
    return add_comment(s.ctx.journal.store(), id, c, now_ms());
  };
  auto added = co_await run_blocking(s.reads(), add);
  if (!added) co_return error_of(added.error());
  co_return Response{201, api::to_json(*added)};
}

}  // namespace loopr::daemon
