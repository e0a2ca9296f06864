// The remote: its URL, the repository named by it, and `git push` of the integration branch.
// git runs as a child of the daemon (not in the sandbox: it is loopr's own step, like the
// merges), with the repository's hooks off and the token, for an http(s) remote only, in the
// child's GIT_CONFIG_* variables (never on its command line, which every process can read).
#include <loopr/core/enum_texts.hpp>
#include <loopr/core/process.hpp>
#include <loopr/forge/forge.hpp>
#include <loopr/llm/http_client.hpp>

namespace loopr::forge {
namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    for (int s = 18; s >= 0; s -= 6) out += t[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16;
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

bool is_http(const std::string& url) {
  return url.rfind("https://", 0) == 0 || url.rfind("http://", 0) == 0;
}

// A plain http:// remote on another machine: the token would travel in clear text.
bool clear_text_to_another_machine(const std::string& url) {
  if (url.rfind("http://", 0) != 0) return false;
  std::string authority = url.substr(7, url.find('/', 7) == std::string::npos
                                            ? std::string::npos
                                            : url.find('/', 7) - 7);
  if (auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  std::string host = authority;
  if (!host.empty() && host.front() == '[') {
    host = host.substr(1, host.find(']') == std::string::npos ? std::string::npos : host.find(']') - 1);
  } else if (auto colon = host.rfind(':'); colon != std::string::npos) {
    host.erase(colon);
  }
  return !llm::is_loopback_host(host);
}

ProcessSpec git_command(const std::filesystem::path& root, std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {"git", "-C", root.string(), "-c", "core.hooksPath=/dev/null"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env_set = {{"GIT_TERMINAL_PROMPT", "0"}, {"LC_ALL", "C"}};
  spec.env_unset = {"GIT_ASKPASS", "SSH_ASKPASS", "GIT_CONFIG_PARAMETERS", "GIT_DIR",
                    "GIT_WORK_TREE"};
  spec.timeout = std::chrono::minutes(5);
  spec.merge_stderr = true;
  return spec;
}

}  // namespace

std::string redact(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (const std::string& s : {secret, base64("x-access-token:" + secret)}) {
    for (std::size_t at = text.find(s); at != std::string::npos; at = text.find(s, at))
      text.replace(at, s.size(), "[token]");
  }
  return text;
}

Result<std::string> remote_url(const std::filesystem::path& root, const std::string& remote) {
  ProcessResult r = run_process(git_command(root, {"remote", "get-url", "--", remote}));
  if (!r.succeeded())
    return make_error(ErrorCode::not_found, "git has no remote '" + remote + "' in " +
                                                root.string() + ": " + trim(r.output) +
                                                " (add it with `git remote add " + remote +
                                                " URL`, or set forge.remote)");
  return trim(r.output);
}

Result<std::string> repo_from_url(const std::string& url, bool all_components) {
  std::string path = url;
  if (auto scheme = path.find("://"); scheme != std::string::npos) {
    path = path.substr(scheme + 3);
    if (url.rfind("file://", 0) != 0) {
      auto slash = path.find('/');
      path = slash == std::string::npos ? "" : path.substr(slash + 1);
    }
  } else if (auto colon = path.find(':'); colon != std::string::npos && path[0] != '/' &&
                                          path.find('/') > colon) {
    path = path.substr(colon + 1);  // scp-like: git@host:owner/name.git
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".git") == 0)
    path.resize(path.size() - 4);
  std::vector<std::string> parts;
  for (std::size_t at = 0; at <= path.size();) {
    auto next = path.find('/', at);
    if (next == std::string::npos) next = path.size();
    if (next > at) parts.push_back(path.substr(at, next - at));
    at = next + 1;
  }
  if (parts.size() < 2)
    return make_error(ErrorCode::invalid_argument,
                      "cannot tell OWNER/NAME from the remote's URL '" + url +
                          "' (set forge.repo: OWNER/NAME)");
  if (!all_components) return parts[parts.size() - 2] + "/" + parts.back();
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

Result<std::string> resolve_repo(const std::filesystem::path& root, const ForgeConfig& forge) {
  if (!forge.repo.empty()) return forge.repo;
  LOOPR_ASSIGN(std::string url, remote_url(root, forge.remote));
  return repo_from_url(url, forge.kind == ForgeKind::gitlab);
}

Result<Pushed> push_branch(const std::filesystem::path& root, const std::string& remote,
                           const std::string& branch, const std::string& token) {
  ProcessResult head = run_process(git_command(root, {"rev-parse", "--verify", "refs/heads/" + branch}));
  if (!head.succeeded())
    return make_error(ErrorCode::not_found, "no branch " + branch + ": " + trim(head.output));
  const std::string sha = trim(head.output);
  LOOPR_ASSIGN(std::string url, remote_url(root, remote));
  ProcessSpec push = git_command(root, {"push", "--no-verify", "--porcelain", "--", remote,
                                "+" + sha + ":refs/heads/" + branch});
  if (!token.empty() && clear_text_to_another_machine(url))
    return make_error(ErrorCode::invalid_argument,
                      "remote " + remote + " (" + redact(url, token) +
                          ") is plain http to another machine: loopr does not send the forge's "
                          "token in clear text (give the remote an https:// URL)");
  if (is_http(url) && !token.empty()) {
    push.env_set["GIT_CONFIG_COUNT"] = "1";
    push.env_set["GIT_CONFIG_KEY_0"] = "http.extraHeader";
    push.env_set["GIT_CONFIG_VALUE_0"] = "Authorization: Basic " + base64("x-access-token:" + token);
  }
  ProcessResult r = run_process(push);
  if (!r.succeeded())
    return make_error(ErrorCode::io, "git push to " + remote + " (" + redact(url, token) +
                                         ") failed: " + redact(trim(r.output), token));
  return Pushed{sha};
}

namespace {
constexpr EnumText<CheckState> kCheckStates[] = {{CheckState::pending, "pending"},
                                                 {CheckState::passed, "passed"},
                                                 {CheckState::failed, "failed"}};
}  // namespace

const char* to_string(CheckState state) { return text_of(kCheckStates, state); }

std::vector<std::string> CiState::failing() const {
  std::vector<std::string> out;
  for (const Check& c : checks)
    if (c.state == CheckState::failed) out.push_back(c.name);
  return out;
}

}  // namespace loopr::forge
