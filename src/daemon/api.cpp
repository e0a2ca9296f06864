// The control API's router: every route (src/daemon/API.md) in one table, each handled by the
// file of its resource (api_daemon_routes, api_plan_routes, api_loop_routes, api_comment_routes;
// `GET /v1/events` in api_events). User actions go to the LoopManager, reads go to the store on
// the pool.
#include <loopr/daemon/http_common.hpp>

#include "daemon/api.hpp"

#include "daemon/api_routes.hpp"

namespace loopr::daemon {

Api::Api(engine::EngineContext& ctx, manager::LoopManager& manager, ApiInfo info)
    : state_(std::make_shared<State>(ctx, manager, std::move(info))) {}
Api::~Api() = default;

Routes Api::routes() {
  Routes r;
  r.handle = [this](Request req) { return handle(std::move(req)); };
  r.is_stream = [](const Request& req) { return is_stream(req); };
  r.stream = [this](Request req, std::shared_ptr<EventStream> out) {
    return stream(std::move(req), std::move(out));
  };
  return r;
}

bool Api::is_stream(const Request& req) { return req.method == "GET" && req.path == "/v1/events"; }

namespace {

// One route: its method, its path (`{name}` matches one segment) and its handler; `writes`:
// refused while the daemon shuts down.
struct Route {
  std::string_view method;
  std::string_view path;
  awaitable<Response> (*handle)(Api::State&, Request&, const Params&);
  bool writes = false;
};

// Every route of the control API (src/daemon/API.md). `GET /v1/events` streams (Api::stream).
const Route kRoutes[] = {
    {"GET", "/v1/health", get_health},
    {"POST", "/v1/web", post_web},
    {"POST", "/v1/web/stop", post_web_stop},
    {"GET", "/v1/stats", get_stats},
    {"POST", "/v1/shutdown", post_shutdown},
    {"POST", "/v1/gc", post_gc, true},
    {"POST", "/v1/plans", post_plan, true},
    {"POST", "/v1/plans/{id}/merge", post_merge, true},
    {"GET", "/v1/plans/{id}/pr/comments", get_pr_comments},
    {"GET", "/v1/loops", get_loops},
    {"GET", "/v1/loops/{id}", get_loop},
    {"GET", "/v1/loops/{id}/artifact", get_artifact},
    {"GET", "/v1/loops/{id}/file", get_file},
    {"GET", "/v1/loops/{id}/diff", get_diff},
    {"GET", "/v1/loops/{id}/iterations/{n}", get_iteration},
    {"GET", "/v1/loops/{id}/comments", get_comments},
    {"POST", "/v1/loops/{id}/comments", post_comment, true},
    {"POST", "/v1/loops/{id}/{action}", post_action, true},
};

}  // namespace

awaitable<Response> Api::handle(Request req) {
  State& s = *state_;
  // Each route's path split once, not at every request.
  static const std::vector<std::vector<std::string>> patterns = path_patterns(kRoutes);
  const auto parts = path_segments(req.path);
  std::string allowed;  // the methods of the routes with this path
  for (std::size_t i = 0; i < std::size(kRoutes); ++i) {
    const Route& route = kRoutes[i];
    auto params = match_path(patterns[i], parts);
    if (!params) continue;
    if (route.method != req.method) {
      allowed += (allowed.empty() ? "" : ", ") + std::string(route.method);
      continue;
    }
    if (route.writes && s.info.shutting_down && s.info.shutting_down())
      co_return error_response(503,
                               "the daemon is shutting down (start it again with `loopr daemon`)");
    co_return co_await route.handle(s, req, *params);
  }
  if (!allowed.empty())
    co_return error_response(405,
                             req.method + " " + req.path + " is not allowed (use " + allowed + ")");
  co_return error_response(
      404, "no such route: " + req.method + " " + req.path + " (see src/daemon/API.md)");
}

}  // namespace loopr::daemon
