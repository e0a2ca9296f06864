// One JSON request to a forge's REST API over llm::HttpClient (keep-alive, TLS, timeouts), with
// the headers every request sends, the rate limit read from every answer, and errors as one line.
#pragma once

#include <nlohmann/json.hpp>

#include <loopr/forge/forge.hpp>
#include <loopr/llm/http_client.hpp>
#include <loopr/core/url.hpp>

namespace loopr::forge {

struct Answer {
  int status = 0;
  std::string body;
  nlohmann::json json;  ///< discarded when the body is not JSON
  llm::HttpHead head;
};

class RestApi {
 public:
  /// `forge_name`: GitHub | GitLab (in messages); `github`: send GitHub's version headers.
  static Result<std::unique_ptr<RestApi>> create(net::io_context& io, const std::string& api_url,
                                                 std::string token, std::string forge_name,
                                                 bool github);
  /// `path` is below api_url. A status other than 2xx is an Error (the detail in `failure`);
  /// `rate` is updated from every answer's headers.
  awaitable<Result<Answer>> call(const std::string& method, const std::string& path,
                                 const nlohmann::json* body, Failure& failure, RateLimit& rate);
  const std::string& name() const { return name_; }

 private:
  std::unique_ptr<llm::HttpClient> http_;
  std::string token_, name_, base_path_;
  bool github_ = true;
};

/// The string at `key`, or empty (a missing key, null, another type).
inline std::string json_str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// `ms` since the epoch as ISO 8601 UTC (`2026-11-28T10:00:00Z`).
std::string iso_time(std::int64_t ms);
using loopr::url_encode;  ///< a path segment or query value (core/url.hpp)
/// The last `bytes` of `text`, cut at a line start.
std::string tail(const std::string& text, std::size_t bytes);

Result<std::unique_ptr<ForgeClient>> make_github(std::unique_ptr<RestApi> api, std::string repo);
Result<std::unique_ptr<ForgeClient>> make_gitlab(std::unique_ptr<RestApi> api, std::string repo);

}  // namespace loopr::forge
