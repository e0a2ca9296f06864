#include <loopr/llm/in_process.hpp>

#include <algorithm>
#include <cctype>

#include <loopr/llm/pricing.hpp>

#include "llm/providers.hpp"

namespace loopr::llm {
namespace {

class InProcessTransport final : public HttpTransport {
 public:
  explicit InProcessTransport(InProcessServer server) : server_(std::move(server)) {
    endpoint_.tls = false;
    endpoint_.host = "in-process";
    endpoint_.port = "0";
  }

  awaitable<std::optional<HttpFailure>> send(const HttpRequest& request, HttpSink& sink) override {
    InProcessAnswer answer = server_(InProcessRequest{request.method, request.target,
                                                      request.headers, request.body});
    HttpHead head;
    head.status = answer.status;
    for (auto& [name, value] : answer.headers) {
      std::string lower = name;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      head.headers.emplace_back(std::move(lower), value);
    }
    sink.on_head(head);
    std::string_view body = answer.body;
    const bool cut = answer.cut_after && *answer.cut_after < body.size();
    if (cut) body = body.substr(0, *answer.cut_after);
    sink.on_body(body);
    if (cut) co_return HttpFailure{HttpFailure::Kind::connection_lost, "cut by the test", true};
    co_return std::nullopt;
  }

  const Endpoint& endpoint() const override { return endpoint_; }

 private:
  InProcessServer server_;
  Endpoint endpoint_;
};

}  // namespace

Result<std::unique_ptr<LlmClient>> make_in_process_client(const Config& config,
                                                          const EnvLookup& env,
                                                          InProcessServer server) {
  if (config.llm.provider != "anthropic" && config.llm.provider != "openai" &&
      config.llm.provider != "openai-responses")
    return make_error(ErrorCode::invalid_argument,
                      "an in-process client speaks anthropic, openai or openai-responses, not " +
                          config.llm.provider);
  auto pricing = std::make_shared<const Pricing>(config.pricing);
  return make_http_llm_client(make_wire(config, env),
                              std::make_unique<InProcessTransport>(std::move(server)),
                              config.llm.stream, std::move(pricing));
}

}  // namespace loopr::llm
