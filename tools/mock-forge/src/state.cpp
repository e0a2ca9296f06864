// The GitHub REST shapes mock-forge answers with (docs.github.com/rest, API version 2022-11-28):
// pulls, check runs, the combined commit status, pull request review comments, the repository.
// It checks what GitHub checks (a token, a User-Agent) and what loopr promises on top (Accept
// and X-GitHub-Api-Version on every request), so a client that forgets them sees an error.
#include "state.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <regex>
#include <stdexcept>

namespace loopr::mock_forge {
namespace {

using json = nlohmann::json;

Reply error(int status, const std::string& message) {
  return {status, {{"message", message}, {"documentation_url", "https://docs.github.com/rest"}}, {}, {}};
}

std::map<std::string, std::string> parse_query(const std::string& q) {
  std::map<std::string, std::string> out;
  std::size_t at = 0;
  while (at < q.size()) {
    auto amp = q.find('&', at);
    std::string kv = q.substr(at, amp == std::string::npos ? std::string::npos : amp - at);
    auto eq = kv.find('=');
    std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    std::string dec;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '%' && i + 2 < v.size()) {
        dec += static_cast<char>(std::stoi(v.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        dec += v[i] == '+' ? ' ' : v[i];
      }
    }
    out[k] = dec;
    if (amp == std::string::npos) break;
    at = amp + 1;
  }
  return out;
}

}  // namespace

std::string iso_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Forge::Forge(json script, Options options) : script_(std::move(script)), options_(std::move(options)) {
  if (!script_.is_object()) throw std::runtime_error("the script is not a JSON object");
  repo_ = script_.value("repo", std::string("acme/widgets"));
  web_ = script_.value("web_url", std::string("https://github.com")) + "/" + repo_;
  remaining_ = script_.value("rate_limit_remaining", 5000);
  gitlab_ = script_.value("kind", std::string("github")) == "gitlab";
  if (gitlab_) web_ = script_.value("web_url", std::string("https://gitlab.com")) + "/" + repo_;
  if (!script_.contains("ci")) script_["ci"] = json::array({json::object()});
  if (!script_["ci"].is_array() || script_["ci"].empty())
    throw std::runtime_error("`ci` must be a non-empty list");
}

std::string Forge::head_sha(const std::string& branch) const {
  if (options_.git_dir.empty()) return std::string(40, '0');
  std::string cmd = "git --git-dir '" + options_.git_dir + "' rev-parse --verify -q 'refs/heads/" +
                    branch + "' 2>/dev/null";
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    std::array<char, 128> buf{};
    while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::vector<std::pair<std::string, std::string>> Forge::rate_headers() {
  return {{"x-ratelimit-limit", "5000"},
          {"x-ratelimit-remaining", std::to_string(std::max(0, remaining_))},
          {"x-ratelimit-reset", std::to_string(std::time(nullptr) + 60)},
          {"x-ratelimit-used", std::to_string(5000 - std::max(0, remaining_))},
          {"x-ratelimit-resource", "core"}};
}

// A scripted fault: {method?, path (regex), status, times?, skip?, message?, rate_limit?,
// reset_in?, retry_after?}; `skip`: the first N requests it matches (and no earlier fault
// answered) pass.
bool Forge::fault(const Request& r, const std::string& path, Reply& out) {
  if (!script_.contains("faults")) return false;
  for (json& f : script_["faults"]) {
    if (f.contains("method") && f["method"].get<std::string>() != r.method) continue;
    if (!std::regex_search(path, std::regex(f.value("path", std::string(".*"))))) continue;
    if (const int skip = f.value("skip", 0); skip > 0) {
      f["skip"] = skip - 1;
      continue;
    }
    int times = f.value("times", 1);
    if (times == 0) continue;
    f["times"] = times - 1;
    out = error(f.value("status", 500), f.value("message", std::string("Server Error")));
    if (f.value("rate_limit", false)) {
      out.headers = {{"x-ratelimit-limit", "5000"}, {"x-ratelimit-remaining", "0"},
                     {"x-ratelimit-reset", std::to_string(std::time(nullptr) + f.value("reset_in", 1))},
                     {"x-ratelimit-resource", "core"}};
      out.body["message"] = "API rate limit exceeded for user ID 1.";
    }
    if (f.contains("retry_after"))
      out.headers.push_back({"retry-after", std::to_string(f["retry_after"].get<int>())});
    return true;
  }
  return false;
}

Reply Forge::handle(const Request& r) {
  std::lock_guard lock(mu_);
  ++requests_;
  auto qm = r.target.find('?');
  std::string path = r.target.substr(0, qm);
  auto query = parse_query(qm == std::string::npos ? "" : r.target.substr(qm + 1));
  if (path.rfind("/_mock/", 0) == 0) return control(r, path);
  auto header = [&](const char* n) {
    auto it = r.headers.find(n);
    return it == r.headers.end() ? std::string() : it->second;
  };
  if (gitlab_) {
    const std::string auth = header("authorization");
    if (auth.empty() || (!options_.token.empty() && auth != "Bearer " + options_.token))
      return {401, {{"message", "401 Unauthorized"}}, {}, {}};
    Reply out;
    if (fault(r, path, out)) return out;
    return gitlab(r, path, query);
  }
  if (header("user-agent").empty())
    return error(403, "Request forbidden by administrative rules. Please make sure your request has a User-Agent header");
  if (header("accept") != "application/vnd.github+json")
    return error(415, "mock-forge: send Accept: application/vnd.github+json");
  if (header("x-github-api-version") != "2022-11-28")
    return error(400, "mock-forge: send X-GitHub-Api-Version: 2022-11-28");
  const std::string auth = header("authorization");
  const bool auth_ok = !auth.empty() && (options_.token.empty() || auth == "Bearer " + options_.token ||
                                         auth == "token " + options_.token);
  if (!auth_ok) return error(401, "Bad credentials");
  Reply out;
  if (fault(r, path, out)) return out;
  if (remaining_ <= 0) {
    out = error(403, "API rate limit exceeded for user ID 1.");
    out.headers = rate_headers();
    remaining_ = script_.value("rate_limit_refill", 5000);
    return out;
  }
  --remaining_;
  out = route(r, path, query);
  auto rate = rate_headers();
  out.headers.insert(out.headers.end(), rate.begin(), rate.end());
  return out;
}

Reply Forge::route(const Request& r, const std::string& path, const std::map<std::string, std::string>& q) {
  const std::string base = "/repos/" + repo_;
  if (path.rfind(base, 0) != 0) return error(404, "Not Found");
  const std::string rest = path.substr(base.size());
  std::smatch m;
  if (rest.empty() && r.method == "GET")
    return {200, {{"id", 1}, {"full_name", repo_}, {"html_url", web_}, {"default_branch", "main"}}, {}};
  if (rest == "/pulls" && r.method == "GET") return pulls(r, q);
  if (rest == "/pulls" && r.method == "POST") return create_pull(r);
  static const std::regex one_pull("^/pulls/([0-9]+)$"), pull_comments("^/pulls/([0-9]+)/comments$"),
      runs("^/commits/([0-9a-f]{4,40})/check-runs$"), combined("^/commits/([0-9a-f]{4,40})/status$");
  if (std::regex_match(rest, m, one_pull) && r.method == "GET") {
    int n = std::stoi(m[1].str());
    for (json& pr : pulls_)
      if (pr["number"] == n) return {200, pr_json(pr), {}};
    return error(404, "Not Found");
  }
  if (std::regex_match(rest, m, pull_comments) && r.method == "GET") return comments(std::stoi(m[1].str()), q);
  if (std::regex_match(rest, m, runs) && r.method == "GET") return check_runs(m[1].str());
  if (std::regex_match(rest, m, combined) && r.method == "GET") return status(m[1].str());
  return error(404, "Not Found");
}

json Forge::pr_json(json& pr) {
  if (pr["state"] == "open") {
    std::string sha = head_sha(pr["head"]["ref"]);
    if (!sha.empty()) pr["head"]["sha"] = sha;
  }
  return pr;
}

Reply Forge::pulls(const Request&, const std::map<std::string, std::string>& q) {
  json list = json::array();
  const std::string owner = repo_.substr(0, repo_.find('/'));
  for (json& pr : pulls_) {
    if (q.count("state") && q.at("state") != "all" && pr["state"] != q.at("state")) continue;
    if (q.count("head") && owner + ":" + pr["head"]["ref"].get<std::string>() != q.at("head")) continue;
    if (q.count("base") && pr["base"]["ref"] != q.at("base")) continue;
    list.push_back(pr_json(pr));
  }
  return {200, list, {}};
}

Reply Forge::create_pull(const Request& r) {
  json b = json::parse(r.body, nullptr, false);
  if (!b.is_object()) return error(400, "Problems parsing JSON");
  for (const char* k : {"title", "head", "base"})
    if (!b.contains(k) || !b[k].is_string() || b[k].get<std::string>().empty())
      return {422, {{"message", "Validation Failed"}, {"errors", {{{"resource", "PullRequest"}, {"field", k}, {"code", "missing_field"}}}}}, {}};
  const std::string head = b["head"];
  for (const json& pr : pulls_)
    if (pr["state"] == "open" && pr["head"]["ref"] == head)
      return {422, {{"message", "Validation Failed"}, {"errors", {{{"resource", "PullRequest"}, {"code", "custom"}, {"message", "A pull request already exists for " + repo_.substr(0, repo_.find('/')) + ":" + head + "."}}}}}, {}};
  std::string sha = head_sha(head);
  if (sha.empty())
    return {422, {{"message", "Validation Failed"}, {"errors", {{{"resource", "PullRequest"}, {"field", "head"}, {"code", "invalid"}}}}}, {}};
  const int n = static_cast<int>(pulls_.size()) + 1;
  json pr = {{"id", 1000 + n}, {"number", n}, {"state", "open"}, {"title", b["title"]},
             {"body", b.value("body", std::string())}, {"html_url", web_ + "/pull/" + std::to_string(n)},
             {"url", "/repos/" + repo_ + "/pulls/" + std::to_string(n)}, {"draft", false},
             {"merged", false}, {"merged_at", nullptr}, {"user", {{"login", "loopr-bot"}}},
             {"head", {{"ref", head}, {"sha", sha}, {"label", repo_.substr(0, repo_.find('/')) + ":" + head}}},
             {"base", {{"ref", b["base"]}, {"label", repo_.substr(0, repo_.find('/')) + ":" + b["base"].get<std::string>()}}},
             {"created_at", iso_now()}};
  pulls_.push_back(pr);
  return {201, pr, {{"location", "/repos/" + repo_ + "/pulls/" + std::to_string(n)}}};
}

// The n-th head commit CI is asked about gets the script's ci[n] (the last one repeats).
const json& Forge::ci_for(const std::string& sha, int& polls) {
  auto at = std::find(shas_.begin(), shas_.end(), sha);
  std::size_t index = static_cast<std::size_t>(at - shas_.begin());
  if (at == shas_.end()) shas_.push_back(sha);
  polls = polls_[sha];
  const json& ci = script_["ci"];
  return ci[std::min(index, ci.size() - 1)];
}

Reply Forge::check_runs(const std::string& sha) {
  int polls = 0;
  const json& ci = ci_for(sha, polls);
  ++polls_[sha];
  const bool pending = polls < ci.value("pending_polls", 0);
  json runs = json::array();
  int id = 1;
  for (const json& c : ci.value("check_runs", json::array())) {
    json run = {{"id", id++}, {"head_sha", sha}, {"name", c.value("name", std::string("ci"))},
                {"status", pending ? "in_progress" : "completed"},
                {"conclusion", pending ? json(nullptr) : json(c.value("conclusion", std::string("success")))},
                {"html_url", web_ + "/runs/" + std::to_string(id)},
                {"output", c.value("output", json{{"title", nullptr}, {"summary", nullptr}, {"text", nullptr}})}};
    runs.push_back(run);
  }
  return {200, {{"total_count", runs.size()}, {"check_runs", runs}}, {}};
}

Reply Forge::status(const std::string& sha) {
  int polls = 0;
  const json& ci = ci_for(sha, polls);
  const bool pending = polls <= ci.value("pending_polls", 0) && ci.value("pending_polls", 0) > 0;
  json statuses = json::array();
  std::string combined = "success";
  for (const json& st : ci.value("statuses", json::array())) {
    std::string state = pending ? "pending" : st.value("state", std::string("success"));
    if (state == "failure" || state == "error") combined = "failure";
    else if (state == "pending" && combined == "success") combined = "pending";
    statuses.push_back({{"context", st.value("context", std::string("ci/legacy"))}, {"state", state},
                        {"description", st.value("description", std::string())},
                        {"target_url", web_ + "/status"}});
  }
  // GitHub: a commit without statuses reports `pending` (forever).
  if (statuses.empty()) combined = "pending";
  return {200, {{"state", combined}, {"sha", sha}, {"total_count", statuses.size()}, {"statuses", statuses}}, {}};
}

Reply Forge::comments(int number, const std::map<std::string, std::string>& q) {
  json out = json::array();
  const std::string since = q.count("since") ? q.at("since") : "";
  for (const json& c : comments_)
    if (c["pull_number"] == number && (since.empty() || c["updated_at"].get<std::string>() >= since))
      out.push_back(c);
  return {200, out, {}};
}

// The team acts on the forge: a PR merged, closed or reopened (GitHub's and GitLab's shapes).
Reply Forge::set_pull_state(int number, const std::string& state) {
  if (state != "open" && state != "closed" && state != "merged")
    return error(400, "state: open | closed | merged");
  for (json& pr : pulls_) {
    if (pr.value(gitlab_ ? "iid" : "number", 0) != number) continue;
    if (gitlab_) {
      pr["state"] = state == "open" ? "opened" : state;
    } else {
      pr["state"] = state == "open" ? "open" : "closed";
      pr["merged"] = state == "merged";
      pr["merged_at"] = state == "merged" ? json(iso_now()) : json(nullptr);
    }
    return {200, pr, {}};
  }
  return error(404, "no pull request " + std::to_string(number));
}

// Test control: `POST /_mock/comments` {pull_number, comments:[{path,line,body,created_at?}]};
// `POST /_mock/pulls/N` {state}: the team merged or closed it; `POST /_mock/faults` {faults:[…]}:
// more scripted faults (the script's shape), first match first; `GET /_mock/state`: the PRs,
// the commits CI was asked about, the request count.
Reply Forge::control(const Request& r, const std::string& path) {
  if (path == "/_mock/state")
    return {200, {{"pulls", pulls_}, {"ci_shas", shas_}, {"requests", requests_}, {"comments", comments_}}, {}};
  static const std::regex one_pull("^/_mock/pulls/([0-9]+)$");
  std::smatch m;
  if (std::regex_match(path, m, one_pull) && r.method == "POST") {
    json b = json::parse(r.body, nullptr, false);
    if (!b.is_object() || !b.contains("state") || !b["state"].is_string()) return error(400, "{\"state\": …}");
    return set_pull_state(std::stoi(m[1].str()), b["state"].get<std::string>());
  }
  if (path == "/_mock/faults" && r.method == "POST") {
    json b = json::parse(r.body, nullptr, false);
    if (!b.is_object() || !b.contains("faults") || !b["faults"].is_array()) return error(400, "{\"faults\": […]}");
    json& faults = script_["faults"];
    if (!faults.is_array()) faults = json::array();
    json added = b["faults"];
    faults.insert(faults.begin(), added.begin(), added.end());
    return {201, {{"faults", faults.size()}}, {}};
  }
  if (path == "/_mock/comments" && r.method == "POST") {
    json b = json::parse(r.body, nullptr, false);
    if (!b.is_object()) return error(400, "not JSON");
    for (const json& c : b.value("comments", json::array())) {
      const std::string when = c.value("created_at", iso_now());
      comments_.push_back({{"id", 5000 + comments_.size()}, {"pull_number", b.value("pull_number", 1)},
                           {"path", c.value("path", std::string())}, {"line", c.value("line", 1)},
                           {"original_line", c.value("line", 1)}, {"side", "RIGHT"},
                           {"body", c.value("body", std::string())}, {"user", {{"login", c.value("user", std::string("reviewer"))}}},
                           {"created_at", when}, {"updated_at", when},
                           {"html_url", web_ + "/pull/1#discussion_r" + std::to_string(5000 + comments_.size())},
                           {"resolved", c.value("resolved", false)}});
    }
    return {201, {{"count", comments_.size()}}, {}};
  }
  return error(404, "Not Found");
}

}  // namespace loopr::mock_forge
