#include <loopr/core/preflight.hpp>
#include <loopr/llm/probe.hpp>

#include "llm/http_client.hpp"
#include "llm/login_sync.hpp"

namespace loopr::llm {
namespace {

// Keeps the status; the body is not needed.
class HeadOnly : public HttpSink {
 public:
  int status = 0;
  void on_head(const HttpHead& head) override { status = head.status; }
  bool on_body(std::string_view) override { return false; }
};

awaitable<void> ask(HttpClient& client, HttpRequest request, HeadOnly& sink,
                    std::optional<HttpFailure>& failure) {
  failure = co_await client.send(request, sink);
}

// The key variables of an agent CLI, as the factory passes them (factory.cpp).
std::map<std::string, std::string> cli_env(const Config& config, const std::string& provider,
                                           const EnvLookup& env) {
  std::map<std::string, std::string> out;
  for (const char* name : {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"})
    if (auto v = env(name); v && !v->empty()) out[name] = *v;
  if (provider == "codex" && !config.llm.base_url.empty())
    out["OPENAI_BASE_URL"] = config.llm.base_url;
  return out;
}

// The API an agent CLI's subscription login talks to (what `doctor` probes for it).
std::string login_api(const std::string& provider) {
  if (provider == "codex") return "https://chatgpt.com/backend-api/codex";
  if (provider == "gemini") return "https://cloudcode-pa.googleapis.com";
  return "https://api.anthropic.com";
}

}  // namespace

bool runs_on_login(const Config& config, const std::string& provider, const EnvLookup& env) {
  return uses_login(provider, cli_env(config, provider, env));
}

LoginInfo inspect_login(const std::string& provider, const std::string& home) {
  LoginInfo out;
  auto file = login_file(provider);
  if (!file || home.empty()) return out;
  auto path = std::filesystem::path(home) / file->home_path;
  out.path = path.string();
  auto doc = read_login(path);
  if (!doc) {
    out.present = doc.error().code != ErrorCode::not_found;
    out.problem = doc.error().message;
    return out;
  }
  out.present = true;
  if (auto fields = credential_fields(file->cli, *doc)) {
    out.well_formed = true;
    out.expires_ms = login_expiry(file->cli, *fields);
  } else if (provider == "codex" && doc->contains("OPENAI_API_KEY") &&
             (*doc)["OPENAI_API_KEY"].is_string() &&
             !(*doc)["OPENAI_API_KEY"].get<std::string>().empty()) {
    out.api_key = true;
  } else {
    out.problem = out.path + " holds no " + file->cli + " login";
  }
  return out;
}

ProbeResult probe_endpoint(const Config& config, const EnvLookup& env,
                           std::chrono::milliseconds timeout) {
  ProbeResult out;
  const LlmConfig& c = config.llm;
  out.url = effective_base_url(config);
  const bool cli = c.provider == "claude-code" || c.provider == "codex" || c.provider == "gemini";
  const bool login = cli && c.base_url.empty() && runs_on_login(config, c.provider, env);
  if (login || (c.provider == "claude-code" && out.url.empty()))
    out.url = login ? login_api(c.provider) : "https://api.anthropic.com";
  auto endpoint = parse_base_url(out.url);
  if (!endpoint) {
    out.failure = endpoint.error().message;
    return out;
  }
  const bool gemini = c.provider == "gemini" && !login;
  const std::string path = gemini ? "/v1beta/models" : "/v1/models";
  out.url += path;
  net::io_context io{1};
  HttpOptions options;
  options.connect_timeout = timeout;
  options.first_byte_timeout = timeout;
  options.idle_timeout = timeout;
  options.ca_file = c.ca_file;
  auto client = HttpClient::create(io, *endpoint, options);
  if (!client) {
    out.failure = client.error().message;
    return out;
  }
  HttpRequest request;
  request.method = "GET";
  request.target = endpoint->base_path + path;
  bool anthropic = c.provider == "anthropic" || c.provider == "claude-code";
  std::string key = env(anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY").value_or("");
  if (anthropic) request.headers.emplace_back("anthropic-version", c.api_version);
  if (gemini) {
    key = env("GEMINI_API_KEY").value_or(env("GOOGLE_API_KEY").value_or(""));
    if (!key.empty()) request.headers.emplace_back("x-goog-api-key", key);
  } else if (login) {
    // A login's token is the CLI's to send: reachable is what is asked here.
  } else if (!key.empty()) {
    if (c.auth_header == "x-api-key")
      request.headers.emplace_back("x-api-key", key);
    else
      request.headers.emplace_back("authorization", "Bearer " + key);
  }
  HeadOnly sink;
  std::optional<HttpFailure> failure;
  auto start = std::chrono::steady_clock::now();
  net::co_spawn(io, ask(**client, request, sink, failure), net::detached);
  // The client's own timeouts end the exchange; this bound only guards against a stuck loop.
  io.run_for(timeout * 3 + std::chrono::seconds(1));
  out.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (sink.status != 0) {
    out.answered = true;
    out.status = sink.status;
  } else if (failure) {
    out.failure = failure->message;
  } else {
    out.failure = "no answer within " + std::to_string(timeout.count()) + " ms";
  }
  return out;
}

}  // namespace loopr::llm
