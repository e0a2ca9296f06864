// What the control API's route files share: the state the routes work on, the request readers
// (api_request.cpp) and every route's handler, grouped by the file of its resource. The table
// that maps a method and path to each is api.cpp's kRoutes.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <loopr/api/comments.hpp>
#include <loopr/api/requests.hpp>
#include <loopr/core/budget.hpp>

#include "daemon/api.hpp"

namespace loopr::daemon {

struct Api::State {
  engine::EngineContext& ctx;
  manager::LoopManager& manager;
  ApiInfo info;
  State(engine::EngineContext& c, manager::LoopManager& m, ApiInfo i)
      : ctx(c), manager(m), info(std::move(i)) {}
  net::thread_pool& reads() { return info.read_pool ? *info.read_pool : ctx.pool; }
  // The loops whose diff comments a request sends now (iterate_action). One daemon holds the
  // store, so this is the only place two sends can meet.
  std::mutex sending_mu;
  std::set<std::string> sending;
};

/// `{"name": value}` of a route's `{name}` segments.
using Params = std::map<std::string, std::string>;

// --- api_request.cpp: reading a request ---

/// The error's answer: its HTTP status (http_status) and message; an unknown id says where to
/// look.
Response error_of(const Error& e);
/// The body as a JSON object (an empty body is `{}`); nullopt + a 400 response if it is not one.
std::optional<nlohmann::json> body_object(const Request& req, Response& bad);
/// The body read by its one reader (`decode`, an api::*_request_from_json); nullopt + the 400
/// response when it is not a JSON object or a field has the wrong shape.
template <typename T>
std::optional<T> read_body(const Request& req, Result<T> (*decode)(const nlohmann::json&),
                           Response& bad) {
  auto body = body_object(req, bad);
  if (!body) return std::nullopt;
  auto r = decode(*body);
  if (!r) {
    bad = error_of(r.error());
    return std::nullopt;
  }
  return std::move(*r);
}
/// The string field `key` (absent or null: empty); nullopt + a 400 response if it is not one.
std::optional<std::string> string_field(const nlohmann::json& body, const char* key,
                                        Response& bad);
/// Whether `id` is a loop id at all (before the store is asked).
bool valid_id(const std::string& id);
/// A plan's own limits from `POST /v1/plans` or `resume` (`max_cost_usd`, `max_runtime`,
/// `max_iterations`) as the manager takes them; nullopt + a 400 response for a value that is not
/// one.
std::optional<RequestBudget> budget_of(const api::LimitsRequest& limits, Response& bad);

// --- api_daemon_routes.cpp: the daemon ---
awaitable<Response> get_health(Api::State& s, Request& req, const Params& p);
awaitable<Response> post_web(Api::State& s, Request& req, const Params& p);
awaitable<Response> post_web_stop(Api::State& s, Request& req, const Params& p);
awaitable<Response> get_stats(Api::State& s, Request& req, const Params& p);
awaitable<Response> post_shutdown(Api::State& s, Request& req, const Params& p);
awaitable<Response> post_gc(Api::State& s, Request& req, const Params& p);

// --- api_plan_routes.cpp: plans ---
awaitable<Response> post_plan(Api::State& s, Request& req, const Params& p);
awaitable<Response> post_merge(Api::State& s, Request& req, const Params& p);
awaitable<Response> get_pr_comments(Api::State& s, Request& req, const Params& p);

// --- api_loop_routes.cpp: loops ---
awaitable<Response> get_loops(Api::State& s, Request& req, const Params& p);
awaitable<Response> get_loop(Api::State& s, Request& req, const Params& p);
awaitable<Response> post_action(Api::State& s, Request& req, const Params& p);

// --- api_file_routes.cpp: a loop's files ---
awaitable<Response> get_artifact(Api::State& s, Request& req, const Params& p);
awaitable<Response> get_file(Api::State& s, Request& req, const Params& p);
awaitable<Response> get_diff(Api::State& s, Request& req, const Params& p);
awaitable<Response> get_iteration(Api::State& s, Request& req, const Params& p);

// --- api_comment_routes.cpp: a loop's diff comments ---
awaitable<Response> get_comments(Api::State& s, Request& req, const Params& p);
awaitable<Response> post_comment(Api::State& s, Request& req, const Params& p);
/// `POST /v1/loops/{id}/iterate` (from post_action): the feedback and, with `comments`, the
/// loop's diff comments not sent yet, as one iteration's feedback.
awaitable<Response> iterate_action(Api::State& s, const std::string& id, api::IterateRequest r);

}  // namespace loopr::daemon
