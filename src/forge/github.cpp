// GitHub's REST API v3 (docs.github.com/rest): pulls, check runs, the combined commit status,
// pull request review comments.
#include "forge/http.hpp"

namespace loopr::forge {
namespace {

using json = nlohmann::json;

std::string s(const json& j, const char* key) { return json_str(j, key); }

PullRequest pr_of(const json& j) {
  PullRequest pr;
  pr.number = j.value("number", 0);
  pr.url = s(j, "html_url");
  // One of loopr's three words whatever the forge sent (it is shown and stored).
  const bool merged = j.value("merged", false) || !s(j, "merged_at").empty();
  pr.state = merged                      ? PullRequestState::merged
             : s(j, "state") == "closed" ? PullRequestState::closed
                                         : PullRequestState::open;
  if (auto h = j.find("head"); h != j.end() && h->is_object()) pr.head_sha = s(*h, "sha");
  return pr;
}

// A check run: queued/in_progress are pending; a completed one passed unless its conclusion
// says it failed.
Check check_run(const json& r) {
  Check c{s(r, "name"), CheckState::pending, "", s(r, "html_url")};
  if (s(r, "status") != "completed") return c;
  const std::string conclusion = s(r, "conclusion");
  const bool bad = conclusion == "failure" || conclusion == "cancelled" ||
                   conclusion == "timed_out" || conclusion == "action_required" ||
                   conclusion == "startup_failure" || conclusion == "stale";
  c.state = bad ? CheckState::failed : CheckState::passed;
  if (bad) {
    const json out = r.value("output", json::object());
    std::string title = out.is_object() ? s(out, "title") : "";
    std::string summary = out.is_object() ? s(out, "summary") : "";
    std::string text = out.is_object() ? s(out, "text") : "";
    c.details = "check run `" + c.name + "`: " + conclusion + (title.empty() ? "" : "\n" + title) +
                (summary.empty() ? "" : "\n" + summary) + (text.empty() ? "" : "\n" + tail(text, 8192));
  }
  return c;
}

Check status_of(const json& st) {
  const std::string state = s(st, "state");
  const CheckState mine = state == "success"   ? CheckState::passed
                          : state == "pending" ? CheckState::pending
                                               : CheckState::failed;
  Check c{s(st, "context"), mine, "", s(st, "target_url")};
  if (c.state == CheckState::failed)
    c.details = "status `" + c.name + "`: " + state + "\n" + s(st, "description");
  return c;
}

class GitHub final : public ForgeClient {
 public:
  GitHub(std::unique_ptr<RestApi> api, std::string repo) : api_(std::move(api)), repo_(std::move(repo)) {
    owner_ = repo_.substr(0, repo_.find('/'));
  }

  awaitable<Result<PullRequest>> open_pr(const PrRequest& r, bool& created) override {
    created = false;
    const std::string list = "/repos/" + repo_ + "/pulls?state=open&head=" +
                             url_encode(owner_ + ":" + r.head) + "&base=" + url_encode(r.base);
    auto found = co_await call("GET", list, nullptr);
    if (!found) co_return found.take_error();
    if (found->json.is_array() && !found->json.empty()) co_return pr_of(found->json.front());
    json body = {{"title", r.title}, {"head", r.head}, {"base", r.base}, {"body", r.body}};
    auto made = co_await call("POST", "/repos/" + repo_ + "/pulls", &body);
    if (!made) co_return made.take_error();
    created = true;
    co_return pr_of(made->json);
  }

  awaitable<Result<PullRequest>> get_pr(int number) override {
    auto got = co_await call("GET", "/repos/" + repo_ + "/pulls/" + std::to_string(number), nullptr);
    if (!got) co_return got.take_error();
    co_return pr_of(got->json);
  }

  awaitable<Result<CiState>> checks(const std::string& sha, int) override {
    CiState out;
    auto runs = co_await call("GET", "/repos/" + repo_ + "/commits/" + sha + "/check-runs?per_page=100", nullptr);
    if (!runs) co_return runs.take_error();
    for (const json& r : runs->json.value("check_runs", json::array())) out.checks.push_back(check_run(r));
    auto status = co_await call("GET", "/repos/" + repo_ + "/commits/" + sha + "/status", nullptr);
    if (!status) co_return status.take_error();
    // A commit with no statuses at all (only check runs, as with GitHub Actions) has the combined
    // state `pending` forever: it is judged by its check runs alone.
    for (const json& st : status->json.value("statuses", json::array())) out.checks.push_back(status_of(st));
    out.state = verdict(out.checks);
    co_return out;
  }

  awaitable<Result<std::vector<ReviewComment>>> comments(int number, std::int64_t since_ms) override {
    std::string path = "/repos/" + repo_ + "/pulls/" + std::to_string(number) + "/comments?per_page=100";
    const std::string since = since_ms > 0 ? iso_time(since_ms) : "";
    if (!since.empty()) path += "&since=" + url_encode(since);
    auto got = co_await call("GET", path, nullptr);
    if (!got) co_return got.take_error();
    std::vector<ReviewComment> out;
    if (!got->json.is_array()) co_return out;
    for (const json& c : got->json) {
      ReviewComment rc;
      rc.path = s(c, "path");
      rc.line = c.contains("line") && c["line"].is_number_integer() ? c["line"].get<int>() : 0;
      rc.body = s(c, "body");
      if (auto u = c.find("user"); u != c.end() && u->is_object()) rc.author = s(*u, "login");
      rc.created_at = s(c, "created_at");
      rc.url = s(c, "html_url");
      // `since` filters on the last update: a comment made before the push stays old.
      if (!since.empty() && rc.created_at < since) continue;
      out.push_back(std::move(rc));
    }
    co_return out;
  }

  awaitable<Result<std::string>> probe() override {
    auto got = co_await call("GET", "/repos/" + repo_, nullptr);
    if (!got) co_return got.take_error();
    co_return s(got->json, "full_name");
  }

  static CheckState verdict(const std::vector<Check>& checks) {
    if (checks.empty()) return CheckState::pending;  // CI has not reported yet
    bool pending = false;
    for (const Check& c : checks) {
      if (c.state == CheckState::failed) return CheckState::failed;
      if (c.state == CheckState::pending) pending = true;
    }
    return pending ? CheckState::pending : CheckState::passed;
  }

 private:
  awaitable<Result<Answer>> call(const std::string& method, const std::string& path, const json* body) {
    co_return co_await api_->call(method, path, body, failure_, rate_);
  }

  std::unique_ptr<RestApi> api_;
  std::string repo_, owner_;
};

}  // namespace

Result<std::unique_ptr<ForgeClient>> make_github(std::unique_ptr<RestApi> api, std::string repo) {
  if (repo.find('/') == std::string::npos)
    return make_error(ErrorCode::invalid_argument, "forge.repo '" + repo + "' is not OWNER/NAME");
  return std::unique_ptr<ForgeClient>(std::make_unique<GitHub>(std::move(api), std::move(repo)));
}

}  // namespace loopr::forge
