// The forge's REST calls (http.hpp): headers, the rate limit, and an error per failure.
#include "forge/http.hpp"

#include <loopr/core/text.hpp>

#include <algorithm>
#include <cctype>
#include <ctime>

namespace loopr::forge {
namespace {

class Collect final : public llm::HttpSink {
 public:
  static constexpr std::size_t kMax = 16 * 1024 * 1024;
  llm::HttpHead head;
  std::string body;
  void on_head(const llm::HttpHead& h) override { head = h; }
  bool on_body(std::string_view bytes) override {
    body.append(bytes.substr(0, kMax - std::min(kMax, body.size())));
    return body.size() < kMax;
  }
};

std::int64_t header_int(const llm::HttpHead& head, std::string_view name, std::int64_t def) {
  auto v = head.header(name);
  if (!v) return def;
  try {
    return std::stoll(std::string(*v));
  } catch (...) {
    return def;
  }
}

// The forge's own words for a refusal: GitHub's `message` and `errors[]`, GitLab's `message`.
std::string refusal(const Answer& a) {
  if (!a.json.is_object()) return a.body.substr(0, 200);
  std::string out;
  if (auto m = a.json.find("message"); m != a.json.end())
    out = m->is_string() ? m->get<std::string>() : m->dump();
  if (auto e = a.json.find("errors"); e != a.json.end() && e->is_array())
    for (const auto& x : *e)
      out += "; " + (x.is_object() && x.contains("message") && x["message"].is_string()
                         ? x["message"].get<std::string>()
                         : x.dump());
  return out;
}

}  // namespace

Result<std::unique_ptr<RestApi>> RestApi::create(net::io_context& io, const std::string& api_url,
                                                 std::string token, std::string forge_name,
                                                 bool github) {
  auto ep = llm::parse_base_url(api_url);
  if (!ep) {
    std::string m = ep.error().message;
    if (auto at = m.find("llm.base_url"); at != std::string::npos) m.replace(at, 12, "forge.api_url");
    return make_error(ErrorCode::invalid_argument, m);
  }
  llm::HttpOptions options;
  options.first_byte_timeout = std::chrono::seconds(60);
  options.idle_timeout = std::chrono::seconds(60);
  options.max_idle_connections = 2;
  std::string base = ep->base_path;
  LOOPR_ASSIGN(auto http, llm::HttpClient::create(io, std::move(*ep), options));
  auto api = std::make_unique<RestApi>();
  api->http_ = std::move(http);
  api->token_ = std::move(token);
  api->name_ = std::move(forge_name);
  api->base_path_ = std::move(base);
  api->github_ = github;
  return api;
}

awaitable<Result<Answer>> RestApi::call(const std::string& method, const std::string& path,
                                        const nlohmann::json* body, Failure& failure,
                                        RateLimit& rate) {
  failure = Failure{};
  llm::HttpRequest req;
  req.method = method;
  req.target = base_path_ + path;
  req.headers = {{"User-Agent", kUserAgent}};
  if (github_) {
    req.headers.push_back({"Accept", "application/vnd.github+json"});
    req.headers.push_back({"X-GitHub-Api-Version", "2022-11-28"});
  } else {
    req.headers.push_back({"Accept", "application/json"});
  }
  if (!token_.empty()) req.headers.push_back({"Authorization", "Bearer " + token_});
  if (body) {
    req.headers.push_back({"Content-Type", "application/json"});
    req.body = json_text(*body);  // the model's text may reach a PR body: never throws
  }
  Collect sink;
  auto failed = co_await http_->send(req, sink);
  if (failed)
    co_return make_error(ErrorCode::io, name_ + " API (" + method + " " + path +
                                            ") cannot be reached: " + redact(failed->message, token_));
  Answer a{sink.head.status, std::move(sink.body), {}, sink.head};
  a.json = nlohmann::json::parse(a.body, nullptr, false);
  rate.remaining = static_cast<int>(header_int(a.head, "x-ratelimit-remaining", rate.remaining));
  rate.reset_epoch_s = header_int(a.head, "x-ratelimit-reset", rate.reset_epoch_s);
  if (a.status >= 200 && a.status < 300) co_return a;
  failure.status = a.status;
  const std::int64_t retry_after = header_int(a.head, "retry-after", -1);
  const bool used_up = header_int(a.head, "x-ratelimit-remaining", -1) == 0;
  if ((a.status == 403 || a.status == 429) && (used_up || retry_after >= 0)) {
    failure.rate_limited = true;
    std::int64_t wait = retry_after >= 0 ? retry_after : rate.reset_epoch_s - std::time(nullptr);
    failure.retry_after = std::chrono::seconds(std::max<std::int64_t>(1, wait));
  }
  std::string why = redact(refusal(a), token_);
  std::string hint = a.status == 401   ? " (the token was refused: check it)"
                     : failure.rate_limited ? " (rate limited: retry after " +
                                                  std::to_string(failure.retry_after.count()) + " s)"
                     : a.status == 403 || a.status == 404
                         ? " (does the token have access to the repository?)"
                         : "";
  co_return make_error(a.status == 404 ? ErrorCode::not_found : ErrorCode::io,
                       name_ + " answered " + std::to_string(a.status) + " to " + method + " " +
                           path + ": " + why + hint);
}

std::string iso_time(std::int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string tail(const std::string& text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  std::size_t from = text.size() - bytes;
  if (auto nl = text.find('\n', from); nl != std::string::npos) from = nl + 1;
  return "[…]\n" + text.substr(from);
}

Result<std::unique_ptr<ForgeClient>> make_client(net::io_context& io, const ForgeConfig& forge,
                                                 std::string repo, std::string token) {
  const bool github = forge.kind != ForgeKind::gitlab;
  LOOPR_ASSIGN(auto api, RestApi::create(io, forge.api_url, std::move(token),
                                         github ? "GitHub" : "GitLab", github));
  if (github) return make_github(std::move(api), std::move(repo));
  return make_gitlab(std::move(api), std::move(repo));
}

}  // namespace loopr::forge
