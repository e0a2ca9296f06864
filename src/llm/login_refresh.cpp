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

std::string refresh_token_of(const std::string& cli, const json& f) {
  const json* v = cli == "claude"  ? &f["claudeAiOauth"]["refreshToken"]
                  : cli == "codex" ? &f["tokens"]["refresh_token"]
                                   : (f.contains("refresh_token") ? &f["refresh_token"] : nullptr);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

HttpRequest refresh_request(const std::string& cli, const std::string& token) {
  HttpRequest r;
  r.headers = {{"Accept", "application/json"}, {"User-Agent", "loopr"}};
  if (cli == "gemini") {
    r.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
    r.body = "client_id=" + url_encode(kGeminiClient) +
             "&client_secret=" + url_encode(kGeminiSecret) + "&refresh_token=" + url_encode(token) +
             "&grant_type=refresh_token";
    return r;
  }
  r.headers.push_back({"Content-Type", "application/json"});
  json body = {{"grant_type", "refresh_token"}, {"refresh_token", token}};
  if (cli == "claude") {
    body["client_id"] = kClaudeClient;
  } else {
    body["client_id"] = kCodexClient;
    body["scope"] = "openid profile email";
  }
  r.body = body.dump();
  return r;
}

// The credential fields after the endpoint's `answer` (an OAuth token response), or nullopt
// when it holds no well-formed token. A field the answer leaves out keeps its old value.
std::optional<json> refreshed_fields(const std::string& cli, json fields, const json& answer,
                                     std::int64_t now) {
  if (!answer.is_object() || !answer.contains("access_token")) return std::nullopt;
  auto str = [&](const char* key) -> std::optional<json> {
    auto it = answer.find(key);
    if (it == answer.end() || !it->is_string()) return std::nullopt;
    return *it;
  };
  std::optional<std::int64_t> until;
  if (auto it = answer.find("expires_in");
      it != answer.end() && it->is_number() && it->get<double>() >= 0 && it->get<double>() < 1e9)
    until = now + static_cast<std::int64_t>(it->get<double>() * 1000);
  if (cli == "claude") {
    json& o = fields["claudeAiOauth"];
    o["accessToken"] = answer["access_token"];
    if (auto v = str("refresh_token")) o["refreshToken"] = *v;
    o["expiresAt"] = until.value_or(now + 3600 * 1000);
    if (auto v = str("scope")) {
      json scopes = json::array();
      std::istringstream words(v->get<std::string>());
      for (std::string w; words >> w;) scopes.push_back(w);
      o["scopes"] = scopes;
    }
  } else if (cli == "codex") {
    json& t = fields["tokens"];
    t["access_token"] = answer["access_token"];
    for (const char* key : {"id_token", "refresh_token"})
      if (auto v = str(key)) t[key] = *v;
    fields["last_refresh"] = format_timestamp(now);
  } else {
    fields["access_token"] = answer["access_token"];
    fields["expiry_date"] = until.value_or(now + 3600 * 1000);
    for (const char* key : {"refresh_token", "id_token", "scope", "token_type"})
      if (auto v = str(key)) fields[key] = *v;
  }
  json whole = fields;  // credential_fields checks the shape of a whole document
  auto checked = credential_fields(cli, whole);
  if (!checked) return std::nullopt;
  return checked;
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
  const std::string token = refresh_token_of(cli, fields);
  if (token.empty()) {
    out.reason = "the login holds no refresh token";
    return out;
  }
  const std::string url = endpoint.url.empty() ? default_token_url(cli) : endpoint.url;
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
  HttpRequest request = refresh_request(cli, token);
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
  out.fields = refreshed_fields(cli, fields, json::parse(sink.body, nullptr, false), now_ms());
  if (!out.fields) out.reason = "the token endpoint's answer holds no well-formed token";
  return out;
}

}  // namespace

std::string default_token_url(const std::string& cli) {
  if (cli == "claude") return "https://platform.claude.com/v1/oauth/token";
  if (cli == "codex") return "https://auth.openai.com/oauth/token";
  return "https://oauth2.googleapis.com/token";
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
  if (cli == "claude" && f.contains("claudeAiOauth")) {
    f["claudeAiOauth"]["refreshToken"] = "";
  } else if (cli == "codex" && f.contains("tokens")) {
    f["tokens"]["refresh_token"] = "";
    f["last_refresh"] = format_timestamp(now);
    f["OPENAI_API_KEY"] = nullptr;
  } else if (cli == "gemini") {
    f.erase("refresh_token");
  }
  return f;
}

std::string access_token(const std::string& cli, const json& doc) {
  auto f = credential_fields(cli, doc);
  if (!f) return "";
  if (cli == "claude") return (*f)["claudeAiOauth"]["accessToken"].get<std::string>();
  if (cli == "codex") return (*f)["tokens"]["access_token"].get<std::string>();
  return (*f)["access_token"].get<std::string>();
}

}  // namespace loopr::llm
