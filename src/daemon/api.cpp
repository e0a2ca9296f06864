// The control API's routes. Every route answers JSON; user actions go to the LoopManager, reads
// go to the store on the pool. `GET /v1/events` replays stored events, then streams live ones.
#include "daemon/api.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <set>

#include <loopr/core/budget.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/core/text.hpp>
#include <loopr/manager/stats.hpp>
#include <loopr/manager/tree_verdict.hpp>

#include "daemon/comments.hpp"
#include "daemon/http_common.hpp"
#include "daemon/loop_listing.hpp"

namespace loopr::daemon {

int http_status(const Error& error) {
  switch (error.code) {
    case ErrorCode::not_found:
      return 404;
    case ErrorCode::illegal_transition:
    case ErrorCode::conflict:
    case ErrorCode::already_exists:
      return 409;
    case ErrorCode::invalid_argument:
      return 400;
    case ErrorCode::unsupported:
      return 503;
    default:
      return 500;
  }
}

namespace {

Response error_of(const Error& e) {
  std::string msg = e.message;
  if (e.code == ErrorCode::not_found && msg.find("(") == std::string::npos)
    msg += " (see `loopr list --all`)";
  return error_response(http_status(e), msg);
}

// The body as a JSON object (an empty body is `{}`); nullopt + a 400 response if it is not one.
std::optional<nlohmann::json> body_object(const Request& req, Response& bad) {
  if (req.body.find_first_not_of(" \t\r\n") == std::string::npos) return nlohmann::json::object();
  auto j = nlohmann::json::parse(req.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    bad = error_response(
        400, "the request body is not a JSON object (send e.g. {\"request\": \"...\"})");
    return std::nullopt;
  }
  return j;
}

std::optional<std::string> string_field(const nlohmann::json& body, const char* key,
                                        Response& bad) {
  if (!body.contains(key) || body[key].is_null()) return std::string();
  if (!body[key].is_string()) {
    bad = error_response(400, std::string("`") + key + "` must be a string");
    return std::nullopt;
  }
  return body[key].get<std::string>();
}

bool valid_id(const std::string& id) { return type_of_id(id).has_value(); }

// A plan's own limits from `POST /v1/plans` (`max_cost_usd`, `max_runtime`, `max_iterations`);
// nullopt + a 400 response for a value that is not one.
std::optional<RequestBudget> budget_fields(const nlohmann::json& body, Response& bad) {
  RequestBudget b;
  if (auto it = body.find("max_cost_usd"); it != body.end() && !it->is_null()) {
    if (!it->is_number() || it->get<double>() <= 0) {
      bad = error_response(400, "`max_cost_usd` must be a number above 0 (US dollars)");
      return std::nullopt;
    }
    b.max_cost_usd = it->get<double>();
  }
  auto runtime = string_field(body, "max_runtime", bad);
  if (!runtime) return std::nullopt;
  if (!runtime->empty()) {
    auto d = parse_duration(*runtime);
    if (!d || d->count() <= 0) {
      bad = error_response(400, "`max_runtime` must be a duration such as 2h or 90m");
      return std::nullopt;
    }
    b.max_runtime = *d;
  }
  if (auto it = body.find("max_iterations"); it != body.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<long long>() < 1 || it->get<long long>() > 100000) {
      bad = error_response(400, "`max_iterations` must be a whole number from 1");
      return std::nullopt;
    }
    b.max_iterations = it->get<int>();
  }
  return b;
}

// How long `POST /v1/shutdown {"drain":true}` lets iterations finish when it names no timeout.
constexpr std::chrono::milliseconds kDefaultDrain = std::chrono::minutes(30);

}  // namespace

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

// `{"name": value}` of a route's `{name}` segments.
using Params = std::map<std::string, std::string>;

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
  auto body = body_object(req, bad);
  if (!body) co_return bad;
  long port = 0;
  if (body->contains("port") && !(*body)["port"].is_null()) {
    if (!(*body)["port"].is_number_integer() || (*body)["port"].get<long>() < 0 ||
        (*body)["port"].get<long>() > 65535)
      co_return error_response(400, "`port` must be a number from 0 to 65535");
    port = (*body)["port"].get<long>();
  }
  auto started = s.info.start_web(static_cast<std::uint16_t>(port));
  if (!started) co_return error_of(started.error());
  co_return Response{200, std::move(*started)};
}

// POST /v1/web/stop: the web UI ends (its token with it).
awaitable<Response> post_web_stop(Api::State& s, Request&, const Params&) {
  if (!s.info.start_web || !s.info.stop_web)
    co_return error_response(503, "this daemon serves no web UI");
  co_return Response{200, {{"stopped", s.info.stop_web()}}};
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
  auto body = body_object(req, bad);
  if (!body) co_return bad;
  const bool drain = body->contains("drain") && (*body)["drain"].is_boolean() &&
                     (*body)["drain"].get<bool>();
  std::chrono::milliseconds limit = kDefaultDrain;
  if (auto t = string_field(*body, "timeout", bad); !t) {
    co_return bad;
  } else if (!t->empty()) {
    auto d = parse_duration(*t);
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
  auto body = body_object(req, bad);
  if (!body) co_return bad;
  manager::GcOptions options = manager::GcOptions::from(*s.ctx.config, now_ms());
  options.dry_run = body->contains("dry_run") && (*body)["dry_run"].is_boolean() &&
                    (*body)["dry_run"].get<bool>();
  if (auto older = string_field(*body, "older_than", bad); !older) {
    co_return bad;
  } else if (!older->empty()) {
    auto d = parse_duration(*older);
    if (!d) co_return error_response(400, "`older_than` must be a duration such as 7d or 12h");
    options.older_than = *d;
  }
  manager::GcReport report = co_await s.manager.gc(options);
  co_return Response{200, manager::to_json(report)};
}

// POST /v1/plans {request, dry_run}: a new plan.
awaitable<Response> post_plan(Api::State& s, Request& req, const Params&) {
  Response bad;
  auto body = body_object(req, bad);
  if (!body) co_return bad;
  if (!body->contains("request") || !(*body)["request"].is_string())
    co_return error_response(400,
                             "the body needs a string field `request` (the feature to build)");
  std::string request = (*body)["request"].get<std::string>();
  const bool dry_run = body->contains("dry_run") && (*body)["dry_run"].is_boolean() &&
                       (*body)["dry_run"].get<bool>();
  auto budget = budget_fields(*body, bad);
  if (!budget) co_return bad;
  auto made = co_await s.manager.submit(request, dry_run, *budget);
  if (!made) co_return error_of(made.error());
  co_return Response{201, {{"id", made->id}}};
}

// POST /v1/plans/{id}/merge[?force=1].
awaitable<Response> post_merge(Api::State& s, Request& req, const Params& p) {
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return error_response(404, "no loop " + id + " (see `loopr list --all`)");
  // `?force=1`: merge an integration tip that fails the code validation (`loopr merge --force`).
  const bool force = req.query.count("force") && req.query["force"] != "false" &&
                     req.query["force"] != "0";
  auto merged = co_await s.manager.merge(id, force);
  if (!merged) co_return error_of(merged.error());
  nlohmann::json out = {{"id", merged->plan_id},
                        {"merged", merged->pr_number == 0},
                        {"sha", merged->sha},
                        {"base_branch", merged->base_branch}};
  if (merged->pr_number > 0)
    out["pr"] = {{"number", merged->pr_number},
                 {"url", merged->pr_url},
                 {"state", merged->pr_state.empty() ? "open" : merged->pr_state}};
  co_return Response{200, std::move(out)};
}

// GET /v1/plans/{id}/pr/comments: the PR's review comments since the last push (merge: pr).
awaitable<Response> get_pr_comments(Api::State& s, Request&, const Params& p) {
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return error_response(404, "no loop " + id + " (see `loopr list --all`)");
  auto got = co_await s.manager.pr_comments(id);
  if (!got) co_return error_of(got.error());
  nlohmann::json list = nlohmann::json::array();
  for (const forge::ReviewComment& c : *got)
    list.push_back({{"path", c.path}, {"line", c.line}, {"author", c.author}, {"body", c.body},
                    {"created_at", c.created_at}, {"url", c.url}});
  co_return Response{200, {{"id", id}, {"comments", std::move(list)}}};
}

// GET /v1/loops[?all,status,type,plan,after,limit,view]: the rows in tree order.
awaitable<Response> get_loops(Api::State& s, Request& req, const Params&) {
  auto query = parse_list_query(req.query);
  if (!query) co_return error_of(query.error());
  // Only what the query keeps is copied out of the store's summaries; a plan row's tree (for
  // its verdict) is the same records unless a filter left some of it out.
  struct Listing {
    std::vector<Loop> matched;
    std::vector<Loop> trees;  ///< filtered queries: the whole trees of the plans shown
    std::map<std::string, manager::BaselineState> baselines;  ///< of the plans shown
  };
  const ListQuery& q = *query;
  auto list = [&s, &q]() -> Result<Listing> {
    Listing out;
    LOOPR_ASSIGN(out.matched, s.ctx.journal.store().list_loop_summaries(
                                  [&q](const Loop& l) { return q.keeps(l); }));
    if (q.tree_fields())
      for (const Loop& l : out.matched)
        if (l.type == LoopType::plan)
          out.baselines[l.id] = manager::baseline_of(s.ctx.journal.store(), l.id);
    if (!q.filtered() || !q.tree_fields()) return out;
    std::set<std::string> plans;
    for (const Loop& l : out.matched)
      if (l.type == LoopType::plan) plans.insert(l.id);
    if (plans.empty()) return out;
    LOOPR_ASSIGN(out.trees, s.ctx.journal.store().list_loop_summaries([&plans](const Loop& l) {
      return l.status != LoopStatus::invalidated && plans.count(l.plan_id) > 0;
    }));
    sort_tree_order(out.trees);
    return out;
  };
  auto listed = co_await run_blocking(s.reads(), list);
  if (!listed) co_return error_of(listed.error());
  ListPage page = page_of(listed->matched, q);
  if (q.interface_view) {
    Response text{200, nullptr};
    text.text = interface_page_text(page);
    text.content_type = "application/json";
    co_return text;
  }
  std::map<std::string, std::span<const Loop>> trees;
  if (q.tree_fields()) trees = tree_spans(q.filtered() ? listed->trees : listed->matched);
  const MergeMode mode = s.ctx.config->merge;
  nlohmann::json out = nlohmann::json::array();
  for (const Loop* l : page.rows) {
    api::LoopRow row = loop_row(*l);
    if (l->type == LoopType::plan) {
      row.tree_cost_usd = s.manager.tree_cost(l->id);
      add_tree_fields(row, *l, trees[l->id], mode, listed->baselines[l->id]);
    }
    out.push_back(api::to_json(row));
  }
  nlohmann::json body{{"loops", std::move(out)}};
  if (!page.next.empty()) body["next"] = page.next;
  co_return Response{200, std::move(body)};
}

// GET /v1/loops/{id}: the loop's detail.
awaitable<Response> get_loop(Api::State& s, Request&, const Params& p) {
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return error_response(404, "no loop " + id + " (see `loopr list --all`)");
  struct Detail {
    Loop loop;
    std::vector<IterationRecord> iterations;
    std::vector<Loop> tree;  ///< a plan's tree, for its verdict
    api::LoopDetail detail;  ///< a plan's forecast and actual
    manager::BaselineState baseline;  ///< a plan's baseline check
  };
  std::shared_ptr<const Config> config = s.ctx.config;
  auto get = [&s, &id, config]() -> Result<Detail> {
    TaskStore& store = s.ctx.journal.store();
    Detail d;
    LOOPR_ASSIGN(d.loop, store.get_loop(id));
    LOOPR_ASSIGN(d.iterations, store.iterations(id));
    if (d.loop.type == LoopType::plan) {
      LOOPR_ASSIGN(d.tree, store.loops_of_plan(id));
      add_gate_fields(d.detail, store, d.loop, d.tree, *config);
      d.baseline = manager::baseline_of(store, id);
    }
    d.detail.loop = loop_row(d.loop);
    add_usage_fields(d.detail.loop, store, d.loop, d.iterations, d.tree, config->merge);
    return d;
  };
  auto got = co_await run_blocking(s.reads(), get);
  if (!got) co_return error_of(got.error());
  const Loop& loop = got->loop;
  const auto& iterations = got->iterations;
  api::LoopDetail& d = got->detail;
  if (loop.type == LoopType::plan)
    add_tree_fields(d.loop, loop, got->tree, s.ctx.config->merge, got->baseline);
  d.loop.tree_cost_usd = s.manager.tree_cost(loop.plan_id);
  // merge: pr: the team may have merged or closed it since (asked in the background, throttled).
  if (loop.type == LoopType::plan && loop.tree.pr_number > 0 && loop.tree.pr_state == "open")
    s.manager.refresh_pr(loop.id);
  for (const auto& it : iterations) {
    d.iterations.push_back({it.n, it.status, it.exit_code, it.usage.cost_usd, it.usage.input_tokens,
                            it.usage.output_tokens, it.duration_ms, it.summary,
                            it.usage.cache_read_tokens, it.usage.cache_write_tokens,
                            it.details.is_object()
                                ? it.details.value("uncached_cost_usd", it.usage.cost_usd)
                                : it.usage.cost_usd,
                            std::nullopt});
    if (auto n = it.details.find("notional_cost_usd"); n != it.details.end() && n->is_number())
      d.iterations.back().notional_cost_usd = n->get<double>();
  }
  d.validation_output = iterations.empty() ? std::string() : iterations.back().output_excerpt;
  d.progress = loop.progress;
  d.input_artifact = loop.input_artifact;
  d.conflicts = loop.tree.conflicts;
  nlohmann::json j = api::to_json(d);
  co_return Response{200, std::move(j)};
}

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
  auto body = body_object(req, bad);
  if (!body) co_return bad;
  api::DiffComment c = api::comment_from_json(*body);
  if (auto side = body->find("side");
      side != body->end() && !(side->is_string() && (*side == "new" || *side == "old")))
    co_return error_response(400, "`side` is `new` or `old`");
  auto add = [&s, &id, c]() -> Result<api::DiffComment> {
    LOOPR_TRY(s.ctx.journal.store().get_loop(id));
    return add_comment(s.ctx.journal.store(), id, c, now_ms());
  };
  auto added = co_await run_blocking(s.reads(), add);
  if (!added) co_return error_of(added.error());
  co_return Response{201, api::to_json(*added)};
}

// POST /v1/loops/{id}/{action}: a person's action on a loop.
awaitable<Response> post_action(Api::State& s, Request& req, const Params& p) {
  Response bad;
  const std::string& action = p.at("action");
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return error_response(404, "no loop " + id + " (see `loopr list --all`)");
  auto body = body_object(req, bad);
  if (!body) co_return bad;
  manager::ActionResult result = make_error(ErrorCode::not_found, "no such action");
  if (action == "approve") {
    result = co_await s.manager.approve(id);
  } else if (action == "reject") {
    auto reason = string_field(*body, "reason", bad);
    if (!reason) co_return bad;
    result = co_await s.manager.reject(id, *reason);
  } else if (action == "iterate") {
    api::IterateRequest r = api::iterate_request_from_json(*body);
    if (r.from_pr) {
      // merge: pr: the PR's review comments since the last push are the feedback.
      result = co_await s.manager.iterate_from_pr(id);
    } else {
      if (!string_field(*body, "feedback", bad)) co_return bad;
      co_return co_await iterate_action(s, id, std::move(r));
    }
  } else if (action == "pause") {
    result = co_await s.manager.pause(id);
  } else if (action == "resume") {
    auto raised = budget_fields(*body, bad);  // `resume --max-cost/--max-runtime`
    if (!raised) co_return bad;
    result = co_await s.manager.resume(id, *raised);
  } else if (action == "stop") {
    result = co_await s.manager.stop(id);
  } else if (action == "answer") {
    auto text = string_field(*body, "text", bad);
    if (!text) co_return bad;
    if (text->find_first_not_of(" \t\r\n") == std::string::npos)
      co_return error_response(400, "the body needs a non-empty string field `text` (the answer)");
    result = co_await s.manager.answer(id, *text);
  } else {
    co_return error_response(
        404, "no action " + action + " (approve, reject, iterate, pause, resume, stop, answer)");
  }
  if (!result) co_return error_of(result.error());
  co_return Response{200, loop_json(*result)};
}

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
    {"GET", "/v1/loops/{id}/comments", get_comments},
    {"POST", "/v1/loops/{id}/comments", post_comment, true},
    {"POST", "/v1/loops/{id}/{action}", post_action, true},
};

}  // namespace

awaitable<Response> Api::handle(Request req) {
  State& s = *state_;
  // Each route's path split once, not at every request.
  static const std::vector<std::vector<std::string>> patterns = [] {
    std::vector<std::vector<std::string>> out;
    for (const Route& route : kRoutes) out.push_back(path_segments(route.path));
    return out;
  }();
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

namespace {

struct Subscription {
  engine::EventBus& bus;
  int id;
  ~Subscription() { bus.unsubscribe(id); }
};

bool wanted(const Event& e, const std::string& loop) {
  return loop.empty() || e.loop_id == loop || is_descendant(e.loop_id, loop);
}

}  // namespace

awaitable<void> Api::stream(Request req, std::shared_ptr<EventStream> out) {
  std::shared_ptr<State> keep = state_;
  State& s = *keep;
  std::uint64_t since = 0;
  if (auto it = req.query.find("since"); it != req.query.end() && !it->second.empty()) {
    try {
      since = std::stoull(it->second);
    } catch (...) {
      since = 0;
    }
  }
  std::string loop_filter = req.query.count("loop") ? req.query["loop"] : std::string();

  // Subscribe first, then replay: nothing stored in between is missed (duplicates are dropped
  // by seq).
  auto queue = std::make_shared<std::deque<Event>>();
  auto wake = std::make_shared<net::steady_timer>(s.ctx.io);
  int sub_id = s.ctx.journal.bus().subscribe([queue, wake, loop_filter](const Event& e) {
    if (!wanted(e, loop_filter)) return;
    if (queue->size() > 100000) queue->pop_front();  // a client that does not read loses the oldest
    queue->push_back(e);
    wake->cancel();
  });
  Subscription sub{s.ctx.journal.bus(), sub_id};

  std::uint64_t last = since;
  while (!out->closed()) {
    std::uint64_t after = last;
    auto read = [&s, after] { return s.ctx.journal.store().events_since(after, 1000); };
    auto batch = co_await run_blocking(s.reads(), read);
    if (!batch || batch->empty()) break;
    for (const auto& e : *batch) {
      last = e.seq;
      if (!wanted(e, loop_filter)) continue;
      bool sent = co_await out->send(std::to_string(e.seq), e.type, json_text(to_json(e)));
      if (!sent) co_return;
    }
  }
  // `follow=false`: the stored history only (what `loopr logs` without -f prints).
  if (auto f = req.query.find("follow");
      f != req.query.end() && (f->second == "false" || f->second == "0"))
    co_return;
  const std::uint64_t replayed = last;
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
    if (e.seq <= replayed) continue;
    bool sent = co_await out->send(std::to_string(e.seq), e.type, json_text(to_json(e)));
    if (!sent) co_return;
  }
}

}  // namespace loopr::daemon
