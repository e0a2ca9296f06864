// The refresh of a subscription login by the daemon (login_refresh.hpp): one OAuth exchange
// with the CLI's token endpoint, under the lock of the person's login folder (login_sync.hpp).
#include "llm/login_refresh.hpp"

#include <sstream>

#include <loopr/core/loop.hpp>
#include <loopr/core/text.hpp>
#include <loopr/core/url.hpp>

#include "llm/http_client.hpp"
#include "llm/login_sync.hpp"

namespace loopr::llm {

namespace {

using nlohmann::json;

// The CLIs' public OAuth clients (installed apps: their ids, and gemini's secret, ship in the
// CLIs and are not secrets).
constexpr const char* kClaudeClient = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
constexpr const char* kCodexClient = "app_EMoamEEZ73f0CkXaXp7hrann";
constexpr const char* kGeminiClient =
    "681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com";
constexpr const char* kGeminiSecret = "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";
constexpr std::size_t kMaxAnswer = 64 * 1024;

class Collect final : public HttpSink {
 public:
  int status = 0;
  std::string body;
  void on_head(const HttpHead& head) override { status = head.status; }
  bool on_body(std::string_view bytes) override {
    body.append(bytes.substr(0, kMaxAnswer - std::min(kMaxAnswer, body.size())));
    return body.size() < kMaxAnswer;
  }
};

awaitable<void> exchange(HttpClient& client, HttpRequest request, Collect& sink,
                         std::optional<HttpFailure>& failure) {
  failure = co_await client.send(request, sink);
}

// An OAuth token answer's string field, nullopt when absent or not a string.
std::optional<json> answer_string(const json& answer, const char* key) {
  auto it = answer.find(key);
  if (it == answer.end() || !it->is_string()) return std::nullopt;
  return *it;
}

void json_body(HttpRequest& r, json body) {
  r.headers.push_back({"Content-Type", "application/json"});
  r.body = body.dump();
}

// Each CLI's refresh, as data: its token endpoint, where its tokens sit in the credential
// fields, the request it sends, and how an answer and a command's copy change the fields.
struct RefreshKind {
  const char* cli;
  const char* token_url;
  const char* access;   ///< JSON pointer of the access token in the credential fields
  const char* refresh;  ///< JSON pointer of the refresh token
  void (*request)(HttpRequest& r, const std::string& refresh_token);
  /// Puts the answer's tokens in `fields`; `until` is when the new access token expires.
  void (*apply)(json& fields, const json& answer, std::int64_t until, std::int64_t now);
  /// Takes the refresh token out of a command's copy.
  void (*copy)(json& fields, std::int64_t now);
};

const RefreshKind kRefreshes[] = {
    {"claude", "https://platform.claude.com/v1/oauth/token", "/claudeAiOauth/accessToken",
     "/claudeAiOauth/refreshToken",
     [](HttpRequest& r, const std::string& token) {
       json_body(r, {{"grant_type", "refresh_token"},
                     {"refresh_token", token},
                     {"client_id", kClaudeClient}});
     },
     [](json& fields, const json& answer, std::int64_t until, std::int64_t) {
       json& o = fields["claudeAiOauth"];
       o["accessToken"] = answer["access_token"];
       if (auto v = answer_string(answer, "refresh_token")) o["refreshToken"] = *v;
       o["expiresAt"] = until;
       if (auto v = answer_string(answer, "scope")) {
         json scopes = json::array();
         std::istringstream words(v->get<std::string>());
         for (std::string w; words >> w;) scopes.push_back(w);
         o["scopes"] = scopes;
       }
     },
     [](json& f, std::int64_t) {
       if (f.contains("claudeAiOauth")) f["claudeAiOauth"]["refreshToken"] = "";
     }},
    {"codex", "https://auth.openai.com/oauth/token", "/tokens/access_token",
     "/tokens/refresh_token",
     [](HttpRequest& r, const std::string& token) {
       json_body(r, {{"grant_type", "refresh_token"},
                     {"refresh_token", token},
                     {"client_id", kCodexClient},
                     {"scope", "openid profile email"}});
     },
     [](json& fields, const json& answer, std::int64_t, std::int64_t now) {
       json& t = fields["tokens"];
       t["access_token"] = answer["access_token"];
       for (const char* key : {"id_token", "refresh_token"})
         if (auto v = answer_string(answer, key)) t[key] = *v;
       fields["last_refresh"] = format_timestamp(now);
     },
     [](json& f, std::int64_t now) {
       if (!f.contains("tokens")) return;
       f["tokens"]["refresh_token"] = "";
       f["last_refresh"] = format_timestamp(now);
       f["OPENAI_API_KEY"] = nullptr;
     }},
    {"gemini", "https://oauth2.googleapis.com/token", "/access_token", "/refresh_token",
     [](HttpRequest& r, const std::string& token) {
       r.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
       r.body = "client_id=" + url_encode(kGeminiClient) +
                "&client_secret=" + url_encode(kGeminiSecret) +
                "&refresh_token=" + url_encode(token) + "&grant_type=refresh_token";
     },
     [](json& fields, const json& answer, std::int64_t until, std::int64_t) {
       fields["access_token"] = answer["access_token"];
       fields["expiry_date"] = until;
       for (const char* key : {"refresh_token", "id_token", "scope", "token_type"})
         if (auto v = answer_string(answer, key)) fields[key] = *v;
     },
     [](json& f, std::int64_t) { f.erase("refresh_token"); }},
};

const RefreshKind* refresh_kind(const std::string& cli) {
  for (const auto& k : kRefreshes)
    if (cli == k.cli) return &k;
  return nullptr;
}

// The string at `pointer` in `f`, "" when there is none.
std::string string_at(const json& f, const char* pointer) {
  const json::json_pointer at(pointer);
  return f.contains(at) && f.at(at).is_string() ? f.at(at).get<std::string>() : std::string();
}

HttpRequest refresh_request(const RefreshKind& kind, const std::string& token) {
  HttpRequest r;
  r.headers = {{"Accept", "application/json"}, {"User-Agent", "loopr"}};
  kind.request(r, token);
  return r;
}

// The credential fields after the endpoint's `answer` (an OAuth token response), or nullopt
// when it holds no well-formed token. A field the answer leaves out keeps its old value.
std::optional<json> refreshed_fields(const RefreshKind& kind, json fields, const json& answer,
                                     std::int64_t now) {
  if (!answer.is_object() || !answer.contains("access_token")) return std::nullopt;
  std::int64_t until = now + 3600 * 1000;
  if (auto it = answer.find("expires_in");
      it != answer.end() && it->is_number() && it->get<double>() >= 0 && it->get<double>() < 1e9)
    until = now + static_cast<std::int64_t>(it->get<double>() * 1000);
  kind.apply(fields, answer, until, now);
  // credential_fields checks the shape of the whole document
  return credential_fields(kind.cli, fields);
}

// One line of the endpoint's refusal: its `error` and `error_description`, printable, short,
// the refresh token taken out (a mock or a proxy may echo it).
std::string refusal(int status, const std::string& body, const std::string& token) {
  std::string out = "the token endpoint answered " + std::to_string(status);
  auto j = json::parse(body, nullptr, false);
  std::string why;
  if (j.is_object()) {
    for (const char* key : {"error", "error_description"})
      if (auto it = j.find(key); it != j.end() && it->is_string())
        why += (why.empty() ? "" : ": ") + it->get<std::string>();
    if (why.empty() && j.contains("error") && j["error"].is_object() &&
        j["error"].contains("message") && j["error"]["message"].is_string())
      why = j["error"]["message"].get<std::string>();
  }
  if (!token.empty())
    for (auto at = why.find(token); at != std::string::npos; at = why.find(token))
      why.replace(at, token.size(), "...");
  return why.empty() ? out : out + " (" + name_text(why, 200) + ")";
}

struct Exchange {
  std::optional<json> fields;
  bool transient = false;
  std::string reason;
};

Exchange refresh(const std::string& cli, const json& fields, const TokenEndpoint& endpoint) {
  Exchange out;
  const RefreshKind* kind = refresh_kind(cli);
  if (!kind) {
    out.reason = "loopr cannot refresh a login of " + name_text(cli, 40);
    return out;
  }
  const std::string token = string_at(fields, kind->refresh);
  if (token.empty()) {
    out.reason = "the login holds no refresh token";
    return out;
  }
  const std::string url = endpoint.url.empty() ? kind->token_url : endpoint.url;
  auto ep = parse_base_url(url);
  if (!ep) {
    out.reason = "bad token endpoint " + url + ": " + ep.error().message;
    return out;
  }
  net::io_context io{1};
  HttpOptions options;
  options.connect_timeout = options.first_byte_timeout = options.idle_timeout = endpoint.timeout;
  options.ca_file = endpoint.ca_file;
  options.max_idle_connections = 0;
  auto client = HttpClient::create(io, *ep, options);
  if (!client) {
    out.reason = client.error().message;
    return out;
  }
  HttpRequest request = refresh_request(*kind, token);
  request.target = ep->base_path.empty() ? "/" : ep->base_path;
  Collect sink;
  std::optional<HttpFailure> failure;
  net::co_spawn(io, exchange(**client, request, sink, failure), net::detached);
  io.run_for(endpoint.timeout * 3 + std::chrono::seconds(1));
  if (failure || sink.status == 0) {
    out.transient = true;
    out.reason = "cannot reach " + ep->host + ": " +
                 (failure ? failure->message : std::string("no answer in time"));
    return out;
  }
  if (sink.status >= 500 || sink.status == 429 || sink.status == 408) {
    out.transient = true;
    out.reason = refusal(sink.status, sink.body, token);
    return out;
  }
  if (sink.status != 200) {
    out.reason = refusal(sink.status, sink.body, token);
    return out;
  }
  out.fields = refreshed_fields(*kind, fields, json::parse(sink.body, nullptr, false), now_ms());
  if (!out.fields) out.reason = "the token endpoint's answer holds no well-formed token";
  return out;
}

}  // namespace

std::string default_token_url(const std::string& cli) {
  const RefreshKind* kind = refresh_kind(cli);
  return kind ? kind->token_url : "";
}

RefreshOutcome fresh_login(const std::string& cli, const std::filesystem::path& person,
                           std::chrono::milliseconds margin, const TokenEndpoint& endpoint) {
  RefreshOutcome out;
  bool refreshed = false;
  auto update = [&](const json& doc) -> Result<std::optional<json>> {
    auto fields = credential_fields(cli, doc);
    if (!fields)
      return make_error(ErrorCode::invalid_argument,
                        person.string() + " holds no well-formed " + cli + " login");
    // Read again under the lock: another command may have refreshed it meanwhile.
    auto expiry = login_expiry(cli, *fields);
    if (expiry && *expiry > now_ms() + margin.count()) return std::optional<json>();
    Exchange x = refresh(cli, *fields, endpoint);
    if (!x.fields) {
      out.transient = x.transient;
      return make_error(ErrorCode::io, x.reason);
    }
    refreshed = true;
    return std::optional<json>(merge_credentials(doc, *x.fields));
  };
  auto doc = update_login(person, update);
  if (!doc) {
    out.absent = doc.error().code == ErrorCode::not_found;
    out.reason = doc.error().message;
    return out;
  }
  out.login = FreshLogin{std::move(*doc), refreshed};
  return out;
}

json login_copy(const std::string& cli, const json& doc, std::int64_t now) {
  json f = credential_fields(cli, doc).value_or(json::object());
  if (const RefreshKind* kind = refresh_kind(cli)) kind->copy(f, now);
  return f;
}

std::string access_token(const std::string& cli, const json& doc) {
  const RefreshKind* kind = refresh_kind(cli);
  auto f = credential_fields(cli, doc);
  return kind && f ? string_at(*f, kind->access) : "";
}

}  // namespace loopr::llm
