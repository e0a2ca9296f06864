// The control API's routes about plans: a new plan, the merge of its tree, its pull request's
// review comments.
#include <loopr/daemon/http_common.hpp>

#include "daemon/api_routes.hpp"

namespace loopr::daemon {

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
    out["pr"] = {
        {"number", merged->pr_number},
        {"url", merged->pr_url},
        {"state",
         merged->pr_state == PullRequestState::none ? "open" : to_string(merged->pr_state)}};
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

}  // namespace loopr::daemon
