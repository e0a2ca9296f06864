// The forge (`merge: pr`): GitHub's REST API v3 or GitLab's v4 for pull requests, their CI and
// their review comments, and `git push` of the integration branch to the configured remote.
// The token is an argument here, never read from the environment: the daemon took it out of its
// environment at start (exec::SecretEnv) and hands it only to these calls, which send it only as
// the Authorization header to api_url and to the remote. HTTP and Beast stay in src/forge/.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/core/loop_marks.hpp>
#include <loopr/core/result.hpp>
#include <loopr/net/asio.hpp>

namespace loopr::forge {

/// A pull request (GitHub) or merge request (GitLab).
struct PullRequest {
  int number = 0;                                   ///< GitHub's number, GitLab's iid
  std::string url;                                  ///< its web address
  PullRequestState state = PullRequestState::none;  ///< open, closed or merged once read
  std::string head_sha;
};

/// What to open: head `loopr/<plan>` into base.
struct PrRequest {
  std::string head, base, title, body;
};

/// A check's (or a commit's) state in loopr's words, whatever the forge called it (GitHub's
/// conclusions, GitLab's pipeline statuses are mapped where they are read).
enum class CheckState { pending, passed, failed };
const char* to_string(CheckState state);  ///< "pending", "passed", "failed" (logs, tests)

/// One check of a commit: a GitHub check run or commit status, a GitLab pipeline job.
struct Check {
  std::string name;
  CheckState state = CheckState::pending;
  std::string details;  ///< a failed check's output: title, summary and text (or the job's log)
  std::string url;
};

/// The verdict on a commit's checks.
struct CiState {
  CheckState state = CheckState::pending;
  std::vector<Check> checks;
  std::vector<std::string> failing() const;  ///< the failed checks' names
};

/// A review comment on the pull request's diff.
struct ReviewComment {
  std::string path;
  int line = 0;  ///< 0: on the file (or an outdated line)
  std::string body;
  std::string author;
  std::string created_at;  ///< ISO 8601, as the forge wrote it
  std::string url;
};

/// How the last request failed (beside the Result's message).
struct Failure {
  int status = 0;                          ///< HTTP status; 0: no answer (network)
  bool rate_limited = false;               ///< 403/429 with the rate limit used up
  std::chrono::seconds retry_after{0};     ///< what the forge asked to wait (rate limit)
};

/// The rate limit as the last answer's headers told it (-1: not said).
struct RateLimit {
  int remaining = -1;
  std::int64_t reset_epoch_s = 0;
};

class ForgeClient {
 public:
  virtual ~ForgeClient() = default;
  /// Opens the PR, or returns the open one with the same head and base (`created` false).
  virtual awaitable<Result<PullRequest>> open_pr(const PrRequest& request, bool& created) = 0;
  /// The PR as it is now (its state: open, closed, merged).
  virtual awaitable<Result<PullRequest>> get_pr(int number) = 0;
  /// The checks of `sha` (GitHub: check runs AND the combined status; a commit without any
  /// status is judged by its check runs alone; GitLab: the MR's head pipeline).
  virtual awaitable<Result<CiState>> checks(const std::string& sha, int number) = 0;
  /// Review comments on the PR's diff made after `since_ms` (ms since the epoch; 0: all).
  virtual awaitable<Result<std::vector<ReviewComment>>> comments(int number,
                                                                 std::int64_t since_ms) = 0;
  /// The repository as the forge sees it (doctor: reachable, the token accepted).
  virtual awaitable<Result<std::string>> probe() = 0;

  const Failure& last_failure() const { return failure_; }
  const RateLimit& rate_limit() const { return rate_; }

 protected:
  Failure failure_;
  RateLimit rate_;
};

/// The client of `forge.kind` for `repo` (OWNER/NAME) at `forge.api_url`.
Result<std::unique_ptr<ForgeClient>> make_client(net::io_context& io, const ForgeConfig& forge,
                                                 std::string repo, std::string token);

/// The User-Agent of every request (GitHub refuses requests without one).
inline constexpr const char* kUserAgent = "loopr/0.1 (+https://github.com/loopr)";

// ---------------------------------------------------------------- the remote (blocking: pool)

/// `git remote get-url <remote>` in `root`.
Result<std::string> remote_url(const std::filesystem::path& root, const std::string& remote);
/// OWNER/NAME from a remote URL: `https://host/o/n.git`, `git@host:o/n.git`, `ssh://…/o/n`,
/// `file:///…/o/n.git`, a plain path `/…/o/n.git` (the last two components; GitLab groups keep
/// every component after the host).
Result<std::string> repo_from_url(const std::string& url, bool all_components = false);
/// The repository to use: `forge.repo`, else parsed from the remote's URL.
Result<std::string> resolve_repo(const std::filesystem::path& root, const ForgeConfig& forge);

struct Pushed {
  std::string sha;  ///< the commit the remote branch points at now
};
/// Pushes the local `branch` to `remote` under the same name (forced: the branch is loopr's and
/// is rebuilt when a plan iterates). The token, when the remote is http(s), goes as git's
/// `http.extraHeader` through GIT_CONFIG_* variables of the git child only (never its argv); the
/// repository's hooks do not run. `token` may be empty (a local remote).
Result<Pushed> push_branch(const std::filesystem::path& root, const std::string& remote,
                           const std::string& branch, const std::string& token);

/// Replaces every occurrence of `secret` in `text` (a git or HTTP message quoted in an error).
std::string redact(std::string text, const std::string& secret);

}  // namespace loopr::forge
