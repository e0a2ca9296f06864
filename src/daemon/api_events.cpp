// `GET /v1/events`: the stored events since `since`, then the live ones as they are journaled,
// as server-sent events (one loop's and its descendants' with `loop=ID`).
#include <deque>

#include <loopr/core/ids.hpp>
#include <loopr/core/text.hpp>
#include <loopr/daemon/http_common.hpp>

#include "daemon/api_routes.hpp"

namespace loopr::daemon {

namespace {

struct Subscription {
  engine::EventBus& bus;
  int id;
  ~Subscription() { bus.unsubscribe(id); }
};

bool wanted(const Event& e, const std::string& loop) {
  return loop.empty() || e.loop_id == loop || is_descendant(e.loop_id, loop);
}

// `GET /v1/events?since=N&loop=ID&follow=false`: where the stream starts, whose events it
// carries, and whether it stays open after the stored history.
struct StreamQuery {
  std::uint64_t since = 0;
  std::string loop;
  bool follow = true;
};

StreamQuery stream_query(Request& req) {
  StreamQuery q;
  if (auto it = req.query.find("since"); it != req.query.end() && !it->second.empty()) {
    try {
      q.since = std::stoull(it->second);
    } catch (...) {
      q.since = 0;
    }
  }
  q.loop = req.query.count("loop") ? req.query["loop"] : std::string();
  // `follow=false`: the stored history only (what `loopr logs` without -f prints).
  if (auto f = req.query.find("follow");
      f != req.query.end() && (f->second == "false" || f->second == "0"))
    q.follow = false;
  return q;
}

// Sends the stored events after `q.since` (of `q.loop`'s subtree); the last seq read, nullopt
// when the client went away.
awaitable<std::optional<std::uint64_t>> replay(Api::State& s, std::shared_ptr<EventStream> out,
                                               StreamQuery q) {
  std::uint64_t last = q.since;
  while (!out->closed()) {
    std::uint64_t after = last;
    auto read = [&s, after] { return s.ctx.journal.store().events_since(after, 1000); };
    auto batch = co_await run_blocking(s.reads(), read);
    if (!batch || batch->empty()) break;
    for (const auto& e : *batch) {
      last = e.seq;
      if (!wanted(e, q.loop)) continue;
      bool sent = co_await out->send(std::to_string(e.seq), e.type, json_text(to_json(e)));
      if (!sent) co_return std::nullopt;
    }
  }
  co_return last;
}

}  // namespace

awaitable<void> Api::stream(Request req, std::shared_ptr<EventStream> out) {
  std::shared_ptr<State> keep = state_;
  State& s = *keep;
  const StreamQuery q = stream_query(req);
  // Subscribe first, then replay: nothing stored in between is missed (duplicates are dropped
  // by seq).
  auto queue = std::make_shared<std::deque<Event>>();
  auto wake = std::make_shared<net::steady_timer>(s.ctx.io);
  int sub_id = s.ctx.journal.bus().subscribe([queue, wake, loop = q.loop](const Event& e) {
    if (!wanted(e, loop)) return;
    if (queue->size() > 100000) queue->pop_front();  // a client that does not read loses the oldest
    queue->push_back(e);
    wake->cancel();
  });
  Subscription sub{s.ctx.journal.bus(), sub_id};
  std::optional<std::uint64_t> replayed = co_await replay(s, out, q);
  if (!replayed || !q.follow) co_return;
  auto last_ping = std::chrono::steady_clock::now();
  while (!out->closed()) {
    if (queue->empty()) {
      wake->expires_after(std::chrono::seconds(1));
      boost::system::error_code ec;
      co_await wake->async_wait(net::redirect_error(net::use_awaitable, ec));
      if (queue->empty() &&
          std::chrono::steady_clock::now() - last_ping > std::chrono::seconds(15)) {
        last_ping = std::chrono::steady_clock::now();
        bool ok = co_await out->comment("ping");
        if (!ok) co_return;
      }
      continue;
    }
    Event e = std::move(queue->front());
    queue->pop_front();
    if (e.seq <= *replayed) continue;
    bool sent = co_await out->send(std::to_string(e.seq), e.type, json_text(to_json(e)));
    if (!sent) co_return;
  }
}

}  // namespace loopr::daemon
