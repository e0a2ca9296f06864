// One model call over HTTP for either wire: send, then read the answer as it comes (JSON body
// or SSE stream) and turn every way it can end into a Response or a classified LlmError.
// A stream that ends before its end marker is an error, never a half answer.
#include <spdlog/spdlog.h>

#include <loopr/core/sse.hpp>

#include "llm/providers.hpp"

namespace loopr::llm {

namespace {

/// Error bodies are quoted in messages; more than this is never useful.
constexpr std::size_t kMaxErrorBody = 64 * 1024;
/// A non-streamed answer larger than this is not a model response.
constexpr std::size_t kMaxBody = 64 * 1024 * 1024;

class ResponseSink final : public HttpSink {
 public:
  ResponseSink(const Wire& wire, bool want_stream)
      : wire_(wire),
        want_stream_(want_stream),
        sse_([this](const SseEvent& ev) { on_event(ev); }) {}

  void on_head(const HttpHead& head) override {
    head_ = head;
    head_received_ = true;
    auto type = head.header("content-type").value_or("");
    // A server may answer a streaming request with plain JSON (some local servers do).
    streaming_ = success() && want_stream_ && type.find("text/event-stream") != std::string::npos;
    if (streaming_) assembler_ = wire_.start_stream();
  }

  bool on_body(std::string_view bytes) override {
    if (streaming_) {
      sse_.feed(bytes);
      return !error_;  // after an error event nothing more is needed
    }
    std::size_t cap = success() ? kMaxBody : kMaxErrorBody;
    if (body_.size() + bytes.size() > cap) {
      body_.append(bytes.substr(0, cap - body_.size()));
      too_large_ = true;
      return false;
    }
    body_.append(bytes);
    return true;
  }

  bool success() const { return head_.status / 100 == 2; }

  const Wire& wire_;
  bool want_stream_;
  SseParser sse_;
  HttpHead head_;
  bool head_received_ = false;
  bool streaming_ = false;
  bool too_large_ = false;
  std::string body_;
  std::unique_ptr<StreamAssembler> assembler_;
  std::optional<LlmError> error_;

 private:
  void on_event(const SseEvent& ev) {
    if (error_ || assembler_->complete()) return;
    error_ = assembler_->on_event(ev);
  }
};

class HttpLlmClient final : public LlmClient {
 public:
  HttpLlmClient(std::unique_ptr<Wire> wire, std::unique_ptr<HttpTransport> http, bool stream,
                std::shared_ptr<const Pricing> pricing)
      : wire_(std::move(wire)),
        http_(std::move(http)),
        stream_(stream),
        pricing_(std::move(pricing)) {}

  awaitable<Outcome> complete(const Request& request) override {
    auto built = wire_->build(request, stream_);
    if (auto* refused = std::get_if<LlmError>(&built)) co_return std::move(*refused);
    HttpRequest& http = std::get<HttpRequest>(built);
    http.target = http_->endpoint().base_path + http.target;

    ResponseSink sink(*wire_, stream_);
    auto failure = co_await http_->send(http, sink);
    Outcome outcome = finish(sink, failure);
    std::string request_id(sink.head_.header(wire_->request_id_header()).value_or(""));
    if (outcome.ok()) {
      Response& r = outcome.response();
      r.request_id = request_id;
      if (r.model.empty()) r.model = request.model.empty() ? model() : request.model;
      r.usage.cost_usd = pricing_->cost_usd(r.model, r.usage);
      spdlog::debug("{} loop {}: {} in={} out={} cache_r={} cache_w={} ${:.6f} [{}]", provider(),
                    request.loop_id, r.stop_reason_text, r.usage.input_tokens,
                    r.usage.output_tokens, r.usage.cache_read_tokens, r.usage.cache_write_tokens,
                    r.usage.cost_usd, request_id);
    } else if (outcome.error().request_id.empty()) {
      outcome.error().request_id = request_id;
    }
    co_return outcome;
  }

  bool runs_own_tools() const override { return false; }
  const std::string& provider() const override { return wire_->provider(); }
  const std::string& model() const override { return wire_->settings().model; }

 private:
  Outcome finish(ResponseSink& sink, const std::optional<HttpFailure>& failure) const {
    if (!sink.head_received_) {
      if (failure) return classify_transport_failure(*failure, provider());
      return protocol_error(provider(), "no response");
    }
    if (!sink.success())
      return classify_http_error(sink.head_, sink.body_, provider(), wire_->settings(),
                                 wire_->request_id_header());
    if (sink.streaming_) {
      if (sink.error_) return *sink.error_;
      if (sink.assembler_->complete()) return sink.assembler_->take_response();
      std::string cut = "the stream ended before " + std::string(wire_->stream_end_marker());
      if (failure) {
        LlmError e = classify_transport_failure(*failure, provider());
        e.message += " (" + cut + ")";
        return e;
      }
      LlmError e;
      e.kind = ErrorKind::network;
      e.retryable = true;
      e.type = "stream_cut";
      e.message = provider() + ": " + cut + "; the partial answer was dropped";
      return e;
    }
    if (failure) return classify_transport_failure(*failure, provider());
    if (sink.too_large_) return protocol_error(provider(), "a response body over 64 MB");
    auto parsed = wire_->parse_response(sink.body_);
    if (auto* e = std::get_if<LlmError>(&parsed)) return std::move(*e);
    return std::get<Response>(std::move(parsed));
  }

  std::unique_ptr<Wire> wire_;
  std::unique_ptr<HttpTransport> http_;
  bool stream_;
  std::shared_ptr<const Pricing> pricing_;
};

}  // namespace

std::unique_ptr<LlmClient> make_http_llm_client(std::unique_ptr<Wire> wire,
                                                std::unique_ptr<HttpTransport> http, bool stream,
                                                std::shared_ptr<const Pricing> pricing) {
  return std::make_unique<HttpLlmClient>(std::move(wire), std::move(http), stream,
                                         std::move(pricing));
}

}  // namespace loopr::llm
