// The control API's routes about the daemon itself: health, the web UI's start and stop, the
// spending stats, shutdown and gc.
#include <loopr/manager/stats.hpp>
#include <loopr/daemon/http_common.hpp>

#include "daemon/api_routes.hpp"

namespace loopr::daemon {

namespace {

// How long `POST /v1/shutdown {"drain":true}` lets iterations finish when it names no timeout.
constexpr std::chrono::milliseconds kDefaultDrain = std::chrono::minutes(30);

}  // namespace

// GET /v1/health: the daemon, its sandbox and its loops by status.
awaitable<Response> get_health(Api::State& s, Request&, const Params&) {
  auto count = [&s] { return s.ctx.journal.store().count_by_status(); };
  auto by_status = co_await run_blocking(s.reads(), count);
  nlohmann::json counts = nlohmann::json::object();
  std::size_t total = 0;
  if (by_status)
    for (const auto& [status, n] : *by_status) {
      total += n;
      counts[to_string(status)] = n;
    }
  counts["total"] = total;
  TimestampMs now = now_ms();
  co_return Response{200,
                     {{"ok", true},
                      {"pid", s.info.pid},
                      {"started_at", format_timestamp(s.info.started_at)},
                      {"uptime_s", (now - s.info.started_at) / 1000},
                      {"repo", s.info.repo},
                      {"active_runs", s.manager.active_runs()},
                      {"stopping", s.info.shutting_down ? s.info.shutting_down() : false},
                      {"draining", s.info.draining ? s.info.draining() : false},
                      {"sandbox", s.info.sandbox ? s.info.sandbox() : nlohmann::json(nullptr)},
                      {"web", s.info.web ? s.info.web() : nlohmann::json(nullptr)},
                      {"disk", s.info.disk ? s.info.disk() : nlohmann::json(nullptr)},
                      {"loops", counts}}};
}

// POST /v1/web {port}: the web UI on 127.0.0.1 (started unless it runs).
awaitable<Response> post_web(Api::State& s, Request& req, const Params&) {
  if (!s.info.start_web || !s.info.stop_web)
    co_return error_response(503, "this daemon serves no web UI");
  Response bad;
  auto r = read_body(req, api::web_request_from_json, bad);
  if (!r) co_return bad;
  auto started = s.info.start_web(static_cast<std::uint16_t>(r->port));
  if (!started) co_return error_of(started.error());
  co_return Response{200, api::to_json(*started)};
}

// POST /v1/web/stop: the web UI ends (its token with it).
awaitable<Response> post_web_stop(Api::State& s, Request&, const Params&) {
  if (!s.info.start_web || !s.info.stop_web)
    co_return error_response(503, "this daemon serves no web UI");
  co_return Response{200, api::to_json(api::WebStopped{s.info.stop_web()})};
}

// GET /v1/stats[?since=D]: what each plan's tree spent.
awaitable<Response> get_stats(Api::State& s, Request& req, const Params&) {
  TimestampMs since = 0;
  if (auto it = req.query.find("since"); it != req.query.end() && !it->second.empty()) {
    auto back = parse_duration(it->second);
    if (!back)
      co_return error_response(400, "`since` must be a duration such as 7d, 12h or 30m");
    since = now_ms() - back->count();
  }
  const MergeMode mode = s.ctx.config->merge;
  auto compute = [&s, since, mode] {
    return manager::stats_of_store(s.ctx.journal.store(), since, mode);
  };
  auto stats = co_await run_blocking(s.reads(), compute);
  if (!stats) co_return error_of(stats.error());
  co_return Response{200, manager::to_json(*stats)};
}

// POST /v1/shutdown [{drain, timeout}].
awaitable<Response> post_shutdown(Api::State& s, Request& req, const Params&) {
  Response bad;
  auto r = read_body(req, api::shutdown_request_from_json, bad);
  if (!r) co_return bad;
  const bool drain = r->drain;
  std::chrono::milliseconds limit = kDefaultDrain;
  if (!r->timeout.empty()) {
    auto d = parse_duration(r->timeout);
    if (!d || d->count() <= 0)
      co_return error_response(400, "`timeout` must be a duration such as 30m or 90s");
    limit = *d;
  }
  if (s.info.request_shutdown) s.info.request_shutdown(drain ? limit : std::chrono::milliseconds(0));
  co_return Response{200, {{"ok", true}, {"drain", drain}}};
}

// POST /v1/gc {dry_run, older_than}.
awaitable<Response> post_gc(Api::State& s, Request& req, const Params&) {
  Response bad;
  auto r = read_body(req, api::gc_request_from_json, bad);
  if (!r) co_return bad;
  manager::GcOptions options = manager::GcOptions::from(*s.ctx.config, now_ms());
  options.dry_run = r->dry_run;
  if (!r->older_than.empty()) {
    auto d = parse_duration(r->older_than);
    if (!d) co_return error_response(400, "`older_than` must be a duration such as 7d or 12h");
    options.older_than = *d;
  }
  manager::GcReport report = co_await s.manager.gc(options);
  co_return Response{200, manager::to_json(report)};
}

}  // namespace loopr::daemon
