#include <loopr/core/preflight.hpp>
#include <loopr/llm/probe.hpp>

#include "llm/http_client.hpp"

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

}  // namespace

ProbeResult probe_endpoint(const Config& config, const EnvLookup& env,
                           std::chrono::milliseconds timeout) {
  ProbeResult out;
  const LlmConfig& c = config.llm;
  out.url = effective_base_url(config);
  if (c.provider == "claude-code" || c.provider == "gemini") {
    out.failure = "the " + c.provider + " CLI chooses its own endpoint";
    return out;
  }
  auto endpoint = parse_base_url(out.url);
  if (!endpoint) {
    out.failure = endpoint.error().message;
    return out;
  }
  out.url += "/v1/models";
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
  request.target = endpoint->base_path + "/v1/models";
  bool anthropic = c.provider == "anthropic";
  std::string key = env(anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY").value_or("");
  if (anthropic) request.headers.emplace_back("anthropic-version", c.api_version);
  if (!key.empty()) {
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
