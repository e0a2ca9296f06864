// `loopr doctor`'s forge checks (merge: pr): the remote the branch is pushed to, the variable
// holding the token, and (online) whether the forge's API answers for the repository with it.
#include "cli/doctor_forge.hpp"

#include <cstdlib>

#include <loopr/forge/forge.hpp>

namespace loopr::cli {
namespace {

constexpr auto kProbeTimeout = std::chrono::seconds(10);

ForgeCheck probe_api(const Config& config, const std::string& repo, const std::string& token) {
  net::io_context io;
  auto client = forge::make_client(io, config.forge, repo, token);
  if (!client)
    return {"forge api", CheckStatus::fail, client.error().message,
            "check forge.api_url and forge.kind"};
  std::optional<Result<std::string>> answer;
  net::co_spawn(
      io, [&]() -> awaitable<void> { answer = co_await (*client)->probe(); }, net::detached);
  io.run_for(kProbeTimeout);
  if (!answer)
    return {"forge api", CheckStatus::fail, config.forge.api_url + " did not answer within 10 s",
            "check the network and forge.api_url; `--offline` skips this check"};
  if (!*answer)
    return {"forge api", CheckStatus::fail, answer->error().message,
            "check forge.repo and the token in " + config.forge.token_env};
  return {"forge api", CheckStatus::ok, config.forge.api_url + " answers for " + **answer, ""};
}

}  // namespace

std::vector<ForgeCheck> check_forge(const std::filesystem::path& root, const Config& config,
                                    bool offline) {
  std::vector<ForgeCheck> out;
  if (config.merge != MergeMode::pr) return out;
  auto url = forge::remote_url(root, config.forge.remote);
  if (!url)
    out.push_back({"remote", CheckStatus::fail, url.error().message,
                   "`git remote add " + config.forge.remote + " URL`, or set forge.remote"});
  else
    out.push_back(
        {"remote", CheckStatus::ok, config.forge.remote + " is " + forge::redact(*url, ""), ""});
  const char* token = std::getenv(config.forge.token_env.c_str());
  const bool have_token = token && *token;
  if (!have_token)
    out.push_back({"forge token", CheckStatus::fail, config.forge.token_env + " is not set",
                   "export " + config.forge.token_env +
                       " (a token allowed to push and open pull requests) before the daemon "
                       "starts (forge.token_env names another variable)"});
  else
    out.push_back({"forge token", CheckStatus::ok, config.forge.token_env + " is set", ""});
  auto repo = forge::resolve_repo(root, config.forge);
  if (!repo) {
    out.push_back(
        {"forge api", CheckStatus::fail, repo.error().message, "set forge.repo: OWNER/NAME"});
  } else if (offline) {
    out.push_back({"forge api", CheckStatus::skip, "not asked (--offline)", ""});
  } else if (!have_token) {
    out.push_back({"forge api", CheckStatus::skip, "not asked: no token", ""});
  } else {
    out.push_back(probe_api(config, *repo, token));
  }
  return out;
}

}  // namespace loopr::cli
