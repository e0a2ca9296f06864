// The control API's routes about loops: the listing, one loop's detail, and a person's actions
// on a loop (approve, reject, iterate, pause, resume, stop, answer).
#include <set>

#include <loopr/manager/tree_verdict.hpp>
#include <loopr/daemon/http_common.hpp>

#include "daemon/api_routes.hpp"
#include "daemon/loop_listing.hpp"

namespace loopr::daemon {

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
  if (loop.type == LoopType::plan && loop.tree.pr_number > 0 &&
      loop.tree.pr_state == PullRequestState::open)
    s.manager.refresh_pr(loop.id);
  for (const auto& it : iterations) {
    d.iterations.push_back({it.n, it.status, it.exit_code, it.usage.cost_usd, it.usage.input_tokens,
                            it.usage.output_tokens, it.duration_ms, it.summary,
                            it.usage.cache_read_tokens, it.usage.cache_write_tokens,
                            it.details.uncached_or(it.usage.cost_usd),
                            it.details.notional_cost_usd});
  }
  d.validation_output = iterations.empty() ? std::string() : iterations.back().output_excerpt;
  d.progress = loop.progress;
  d.input_artifact = loop.input_artifact;
  d.conflicts = loop.tree.conflicts;
  nlohmann::json j = api::to_json(d);
  co_return Response{200, std::move(j)};
}

namespace {

// A person's action on a loop: the manager's call with what the request's body carries.
using Body = const nlohmann::json&;
using ActionCall = awaitable<Response> (*)(Api::State&, const std::string& id, Body body);

Response answer_of(const manager::ActionResult& result) {
  if (!result) return error_of(result.error());
  return Response{200, loop_json(*result)};
}

// An action whose request carries nothing but the loop.
template <awaitable<manager::ActionResult> (manager::LoopManager::*Call)(std::string)>
awaitable<Response> plain(Api::State& s, const std::string& id, Body) {
  co_return answer_of(co_await (s.manager.*Call)(id));
}

awaitable<Response> reject(Api::State& s, const std::string& id, Body body) {
  auto r = api::reject_request_from_json(body);
  if (!r) co_return error_of(r.error());
  co_return answer_of(co_await s.manager.reject(id, r->reason));
}

awaitable<Response> iterate(Api::State& s, const std::string& id, Body body) {
  api::IterateRequest r = api::iterate_request_from_json(body);
  // merge: pr: the PR's review comments since the last push are the feedback.
  if (r.from_pr) co_return answer_of(co_await s.manager.iterate_from_pr(id));
  Response bad;
  if (!string_field(body, "feedback", bad)) co_return bad;
  co_return co_await iterate_action(s, id, std::move(r));
}

awaitable<Response> resume(Api::State& s, const std::string& id, Body body) {
  auto limits = api::limits_request_from_json(body);  // `resume --max-cost/--max-runtime`
  if (!limits) co_return error_of(limits.error());
  Response bad;
  auto raised = budget_of(*limits, bad);
  if (!raised) co_return bad;
  co_return answer_of(co_await s.manager.resume(id, *raised));
}

awaitable<Response> answer(Api::State& s, const std::string& id, Body body) {
  auto r = api::answer_request_from_json(body);
  if (!r) co_return error_of(r.error());
  co_return answer_of(co_await s.manager.answer(id, r->text));
}

struct LoopAction {
  std::string_view name;
  ActionCall call;
};

// Every action `POST /v1/loops/{id}/{action}` takes, in the order its 404 names them.
constexpr LoopAction kLoopActions[] = {{"approve", plain<&manager::LoopManager::approve>},
                                       {"reject", reject},
                                       {"iterate", iterate},
                                       {"pause", plain<&manager::LoopManager::pause>},
                                       {"resume", resume},
                                       {"stop", plain<&manager::LoopManager::stop>},
                                       {"answer", answer}};

}  // namespace

// POST /v1/loops/{id}/{action}: a person's action on a loop, looked up in kLoopActions.
awaitable<Response> post_action(Api::State& s, Request& req, const Params& p) {
  const std::string& action = p.at("action");
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return error_response(404, "no loop " + id + " (see `loopr list --all`)");
  Response bad;
  auto body = body_object(req, bad);
  if (!body) co_return bad;
  for (const LoopAction& a : kLoopActions)
    if (a.name == action) co_return co_await a.call(s, id, *body);
  std::string names;
  for (const LoopAction& a : kLoopActions)
    names += (names.empty() ? "" : ", ") + std::string(a.name);
  co_return error_response(404, "no action " + action + " (" + names + ")");
}

}  // namespace loopr::daemon
