// GitLab's REST API v4 (docs.gitlab.com/ee/api): merge requests, their pipelines and jobs, and
// their diff discussions (GitLab tells resolved threads: only unresolved notes are taken).
#include "forge/http.hpp"

namespace loopr::forge {
namespace {

using json = nlohmann::json;

std::string s(const json& j, const char* key) { return json_str(j, key); }

PullRequest mr_of(const json& j) {
  PullRequest pr;
  pr.number = j.value("iid", 0);
  pr.url = s(j, "web_url");
  const std::string state = s(j, "state");
  pr.state = state == "merged"   ? PullRequestState::merged
             : state == "closed" ? PullRequestState::closed
                                 : PullRequestState::open;  // opened, locked: open
  pr.head_sha = s(j, "sha");
  return pr;
}

CheckState pipeline_state(const std::string& status) {
  if (status == "success" || status == "skipped") return CheckState::passed;
  if (status == "failed" || status == "canceled") return CheckState::failed;
  return CheckState::pending;
}

class GitLab final : public ForgeClient {
 public:
  GitLab(std::unique_ptr<RestApi> api, std::string repo)
      : api_(std::move(api)), project_("/projects/" + url_encode(repo)) {}

  awaitable<Result<PullRequest>> open_pr(const PrRequest& r, bool& created) override {
    created = false;
    auto found = co_await call("GET", project_ + "/merge_requests?state=opened&source_branch=" +
                                          url_encode(r.head) + "&target_branch=" + url_encode(r.base),
                               nullptr);
    if (!found) co_return found.take_error();
    if (found->json.is_array() && !found->json.empty()) co_return mr_of(found->json.front());
    json body = {{"source_branch", r.head}, {"target_branch", r.base}, {"title", r.title},
                 {"description", r.body}};
    auto made = co_await call("POST", project_ + "/merge_requests", &body);
    if (!made) co_return made.take_error();
    created = true;
    co_return mr_of(made->json);
  }

  awaitable<Result<PullRequest>> get_pr(int number) override {
    auto got = co_await call("GET", project_ + "/merge_requests/" + std::to_string(number), nullptr);
    if (!got) co_return got.take_error();
    co_return mr_of(got->json);
  }

  awaitable<Result<CiState>> checks(const std::string& sha, int number) override {
    CiState out;
    out.state = CheckState::pending;
    auto pipes = co_await call("GET", project_ + "/merge_requests/" + std::to_string(number) + "/pipelines", nullptr);
    if (!pipes) co_return pipes.take_error();
    json found;
    for (const json& p : pipes->json.is_array() ? pipes->json : json::array())
      if (s(p, "sha") == sha) {
        found = p;
        break;
      }
    if (!found.is_object()) co_return out;  // no pipeline for this commit yet
    const json* pipe = &found;
    const std::string id = std::to_string(pipe->value("id", 0));
    out.state = pipeline_state(s(*pipe, "status"));
    if (out.state != CheckState::failed) {
      out.checks.push_back({"pipeline " + id, out.state, "", s(*pipe, "web_url")});
      co_return out;
    }
    auto jobs = co_await call("GET", project_ + "/pipelines/" + id + "/jobs?scope[]=failed", nullptr);
    if (!jobs) co_return jobs.take_error();
    for (const json& j : jobs->json.is_array() ? jobs->json : json::array()) {
      Check c{s(j, "name"), CheckState::failed, "job `" + s(j, "name") + "` failed",
              s(j, "web_url")};
      auto log = co_await call("GET", project_ + "/jobs/" + std::to_string(j.value("id", 0)) + "/trace", nullptr);
      if (log) c.details += "\n" + tail(log->body, 8192);
      out.checks.push_back(std::move(c));
    }
    if (out.checks.empty())
      out.checks.push_back(
          {"pipeline " + id, CheckState::failed, "pipeline " + id + " failed", ""});
    co_return out;
  }

  awaitable<Result<std::vector<ReviewComment>>> comments(int number, std::int64_t since_ms) override {
    auto got = co_await call("GET", project_ + "/merge_requests/" + std::to_string(number) +
                                        "/discussions?per_page=100", nullptr);
    if (!got) co_return got.take_error();
    const std::string since = since_ms > 0 ? iso_time(since_ms) : "";
    std::vector<ReviewComment> out;
    for (const json& d : got->json.is_array() ? got->json : json::array()) {
      for (const json& n : d.value("notes", json::array())) {
        if (n.value("system", false) || n.value("resolved", false)) continue;
        auto pos = n.find("position");
        if (pos == n.end() || !pos->is_object()) continue;  // not on the diff
        ReviewComment rc;
        rc.path = s(*pos, "new_path");
        rc.line = pos->contains("new_line") && (*pos)["new_line"].is_number_integer()
                      ? (*pos)["new_line"].get<int>() : 0;
        rc.body = s(n, "body");
        if (auto a = n.find("author"); a != n.end() && a->is_object()) rc.author = s(*a, "username");
        rc.created_at = s(n, "created_at");
        if (!since.empty() && rc.created_at.substr(0, 19) < since.substr(0, 19)) continue;
        out.push_back(std::move(rc));
      }
    }
    co_return out;
  }

  awaitable<Result<std::string>> probe() override {
    auto got = co_await call("GET", project_, nullptr);
    if (!got) co_return got.take_error();
    co_return s(got->json, "path_with_namespace");
  }

 private:
  awaitable<Result<Answer>> call(const std::string& method, const std::string& path, const json* body) {
    co_return co_await api_->call(method, path, body, failure_, rate_);
  }

  std::unique_ptr<RestApi> api_;
  std::string project_;
};

}  // namespace

Result<std::unique_ptr<ForgeClient>> make_gitlab(std::unique_ptr<RestApi> api, std::string repo) {
  return std::unique_ptr<ForgeClient>(std::make_unique<GitLab>(std::move(api), std::move(repo)));
}

}  // namespace loopr::forge
