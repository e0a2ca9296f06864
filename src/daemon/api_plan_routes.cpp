// The control API's routes about plans: a new plan, the merge of its tree, its pull request's
// review comments.
#include <loopr/api/answers.hpp>
#include <loopr/daemon/http_common.hpp>

#include "daemon/api_routes.hpp"

namespace loopr::daemon {

// POST /v1/plans {request, dry_run}: a new plan.
awaitable<Response> post_plan(Api::State& s, Request& req, const Params&) {
  Response bad;
  auto r = read_body(req, api::plan_request_from_json, bad);
  if (!r) co_return bad;
  auto budget = budget_of(r->limits, bad);
  if (!budget) co_return bad;
  auto made = co_await s.manager.submit(r->request, r->dry_run, *budget);
  if (!made) co_return error_of(made.error());
  co_return Response{201, api::to_json(api::PlanCreated{made->id})};
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
  api::MergeView out{merged->plan_id, merged->pr_number == 0, merged->sha, merged->base_branch,
                     std::nullopt};
  if (merged->pr_number > 0)
    out.pr = api::MergedPr{merged->pr_number, merged->pr_url,
                           merged->pr_state == PullRequestState::none ? PullRequestState::open
                                                                      : merged->pr_state};
  co_return Response{200, api::to_json(out)};
}

// GET /v1/plans/{id}/pr/comments: the PR's review comments since the last push (merge: pr).
awaitable<Response> get_pr_comments(Api::State& s, Request&, const Params& p) {
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return error_response(404, "no loop " + id + " (see `loopr list --all`)");
  auto got = co_await s.manager.pr_comments(id);
  if (!got) co_return error_of(got.error());
  api::PrCommentsView out{id, {}};
  for (const forge::ReviewComment& c : *got)
    out.comments.push_back({c.path, c.line, c.author, c.body, c.created_at, c.url});
  co_return Response{200, api::to_json(out)};
}

}  // namespace loopr::daemon
