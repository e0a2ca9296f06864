// mock-forge as GitLab (REST v4, docs.gitlab.com/ee/api): merge requests, their pipelines, the
// failed jobs and their logs, and MR discussions with diff notes. The CI script is the same as
// GitHub's: a head commit's check runs become its pipeline (failed when one fails, running while
// `pending_polls` last) and the failing ones its failed jobs, whose log is the run's output.
#include <algorithm>
#include <regex>

#include "state.hpp"

namespace loopr::mock_forge {
namespace {

using json = nlohmann::json;

std::string encoded(const std::string& repo) {
  std::string out;
  for (char c : repo) out += c == '/' ? std::string("%2F") : std::string(1, c);
  return out;
}

}  // namespace

Reply Forge::gitlab(const Request& r, const std::string& path,
                    const std::map<std::string, std::string>& q) {
  const std::string base = "/api/v4/projects/" + encoded(repo_);
  if (path.rfind(base, 0) != 0) return {404, {{"message", "404 Project Not Found"}}};
  const std::string rest = path.substr(base.size());
  std::smatch m;
  static const std::regex one("^/merge_requests/([0-9]+)$"), pipes("^/merge_requests/([0-9]+)/pipelines$"),
      notes("^/merge_requests/([0-9]+)/discussions$"), jobs("^/pipelines/([0-9]+)/jobs$"),
      trace("^/jobs/([0-9]+)/trace$");
  if (rest.empty()) return {200, {{"id", 7}, {"path_with_namespace", repo_}, {"web_url", web_}}};
  if (rest == "/merge_requests" && r.method == "GET") {
    json list = json::array();
    for (json& mr : pulls_) {
      if (q.count("state") && mr["state"] != q.at("state")) continue;
      if (q.count("source_branch") && mr["source_branch"] != q.at("source_branch")) continue;
      if (q.count("target_branch") && mr["target_branch"] != q.at("target_branch")) continue;
      mr["sha"] = head_sha(mr["source_branch"]);
      list.push_back(mr);
    }
    return {200, list};
  }
  if (rest == "/merge_requests" && r.method == "POST") {
    json b = json::parse(r.body, nullptr, false);
    if (!b.is_object() || !b.contains("source_branch") || !b.contains("target_branch") || !b.contains("title"))
      return {400, {{"message", "source_branch, target_branch, title are missing"}}};
    for (const json& mr : pulls_)
      if (mr["state"] == "opened" && mr["source_branch"] == b["source_branch"])
        return {409, {{"message", {"Another open merge request already exists for this source branch"}}}};
    const int iid = static_cast<int>(pulls_.size()) + 1;
    json mr = {{"id", 100 + iid}, {"iid", iid}, {"state", "opened"}, {"title", b["title"]},
               {"description", b.value("description", std::string())},
               {"source_branch", b["source_branch"]}, {"target_branch", b["target_branch"]},
               {"web_url", web_ + "/-/merge_requests/" + std::to_string(iid)},
               {"sha", head_sha(b["source_branch"])}};
    pulls_.push_back(mr);
    return {201, mr};
  }
  if (std::regex_match(rest, m, one))
    for (json& mr : pulls_)
      if (mr["iid"] == std::stoi(m[1].str())) return {200, mr};
  if (std::regex_match(rest, m, pipes)) return gitlab_pipelines(std::stoi(m[1].str()));
  if (std::regex_match(rest, m, notes)) return gitlab_discussions(std::stoi(m[1].str()));
  if (std::regex_match(rest, m, jobs)) {
    // Pipeline ids are 1 + the index of the commit in shas_; job ids 1000 * pipeline + index.
    const std::size_t p = std::stoul(m[1].str());
    json list = json::array();
    if (p == 0 || p > shas_.size()) return {404, {{"message", "404 Not found"}}};
    int polls = 0;
    const json& ci = ci_for(shas_[p - 1], polls);
    int i = 0;
    for (const json& c : ci.value("check_runs", json::array())) {
      ++i;
      if (c.value("conclusion", std::string("success")) != "failure") continue;
      list.push_back({{"id", 1000 * p + i}, {"name", c.value("name", std::string("ci"))},
                      {"status", "failed"}, {"web_url", web_ + "/-/jobs/" + std::to_string(1000 * p + i)}});
    }
    return {200, list};
  }
  if (std::regex_match(rest, m, trace)) {
    const std::size_t id = std::stoul(m[1].str()), p = id / 1000, i = id % 1000;
    if (p == 0 || p > shas_.size()) return {404, {{"message", "404 Not found"}}};
    int polls = 0;
    const json& runs = ci_for(shas_[p - 1], polls).value("check_runs", json::array());
    if (i == 0 || i > runs.size()) return {404, {{"message", "404 Not found"}}};
    const json out = runs[i - 1].value("output", json::object());
    return {200, nullptr, {}, "$ make test\n" + out.value("text", std::string("failed")) + "\n"};
  }
  return {404, {{"message", "404 Not found"}}};
}

Reply Forge::gitlab_pipelines(int iid) {
  for (json& mr : pulls_) {
    if (mr["iid"] != iid) continue;
    const std::string sha = head_sha(mr["source_branch"]);
    int polls = 0;
    const json& ci = ci_for(sha, polls);
    ++polls_[sha];
    const std::size_t id = static_cast<std::size_t>(std::find(shas_.begin(), shas_.end(), sha) - shas_.begin()) + 1;
    std::string status = polls < ci.value("pending_polls", 0) ? "running" : "success";
    if (status == "success")
      for (const json& c : ci.value("check_runs", json::array()))
        if (c.value("conclusion", std::string("success")) == "failure") status = "failed";
    return {200, json::array({{{"id", id}, {"iid", id}, {"sha", sha}, {"ref", mr["source_branch"]},
                               {"status", status}, {"web_url", web_ + "/-/pipelines/" + std::to_string(id)}}})};
  }
  return {404, {{"message", "404 Not found"}}};
}

Reply Forge::gitlab_discussions(int iid) {
  json out = json::array();
  for (const json& c : comments_) {
    if (c["pull_number"] != iid) continue;
    out.push_back({{"id", std::to_string(c["id"].get<int>())},
                   {"notes", json::array({{{"id", c["id"]}, {"body", c["body"]}, {"system", false},
                                           {"author", {{"username", c["user"]["login"]}}},
                                           {"created_at", c["created_at"]}, {"resolvable", true},
                                           {"resolved", c.value("resolved", false)},
                                           {"position", {{"new_path", c["path"]}, {"new_line", c["line"]}}}}})}});
  }
  return {200, out};
}

}  // namespace loopr::mock_forge
