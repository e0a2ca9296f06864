// mock-forge's GitHub: a repository with its pull requests, the scripted CI of each head
// commit, review comments and scripted faults. Plain C++ on JSON; server.cpp carries the HTTP.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace loopr::mock_forge {

struct Request {
  std::string method, target;  ///< target: path and query
  std::map<std::string, std::string> headers;  ///< lower-case names
  std::string body;
};

struct Reply {
  using Headers = std::vector<std::pair<std::string, std::string>>;
  Reply() = default;
  Reply(int s, nlohmann::json b, Headers h = {}, std::string t = {})
      : status(s), body(std::move(b)), headers(std::move(h)), text(std::move(t)) {}
  int status = 200;
  nlohmann::json body;
  Headers headers;
  std::string text;  ///< a plain-text answer (a GitLab job's log) instead of `body`
};

struct Options {
  std::string token;    ///< empty: any Authorization is accepted (but one is required)
  std::string git_dir;  ///< a bare repository: a PR's head sha is read from it
};

class Forge {
 public:
  /// `script`: see tools/mock-forge/README.md. Throws std::runtime_error for a bad script.
  Forge(nlohmann::json script, Options options);
  /// One request, answered (thread-safe).
  Reply handle(const Request& r);

 private:
  Reply route(const Request& r, const std::string& path, const std::map<std::string, std::string>& q);
  Reply pulls(const Request& r, const std::map<std::string, std::string>& q);
  Reply create_pull(const Request& r);
  Reply check_runs(const std::string& sha);
  Reply status(const std::string& sha);
  Reply comments(int number, const std::map<std::string, std::string>& q);
  Reply control(const Request& r, const std::string& path);
  Reply set_pull_state(int number, const std::string& state);
  // GitLab's REST v4 (`"kind": "gitlab"` in the script): gitlab.cpp.
  Reply gitlab(const Request& r, const std::string& path, const std::map<std::string, std::string>& q);
  Reply gitlab_pipelines(int iid);
  Reply gitlab_discussions(int iid);
  const nlohmann::json& ci_for(const std::string& sha, int& polls);
  std::string head_sha(const std::string& branch) const;
  nlohmann::json pr_json(nlohmann::json& pr);
  std::vector<std::pair<std::string, std::string>> rate_headers();
  bool fault(const Request& r, const std::string& path, Reply& out);

  std::mutex mu_;
  nlohmann::json script_;
  Options options_;
  std::string repo_, web_;
  bool gitlab_ = false;
  std::vector<nlohmann::json> pulls_;
  std::vector<std::string> shas_;           ///< head commits in the order CI was first asked
  std::map<std::string, int> polls_;        ///< check-run polls per commit
  std::vector<nlohmann::json> comments_;    ///< review comments (all PRs: `pull_number`)
  int remaining_ = 5000;
  std::int64_t requests_ = 0;
};

/// Now as ISO 8601 UTC with seconds.
std::string iso_now();

}  // namespace loopr::mock_forge
