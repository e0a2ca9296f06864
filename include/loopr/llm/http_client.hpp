// A small HTTP/1.1 client for the model APIs: keep-alive connections to one endpoint, TLS with
// SNI and certificate verification (system CAs + an optional ca_file), plain HTTP only to
// loopback, connect / first-byte / idle timeouts, and the body handed over as it arrives (SSE).
// Beast and OpenSSL stay inside http_client.cpp. Used by the model clients and the forge client
// (src/forge/).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <loopr/core/result.hpp>
#include <loopr/net/asio.hpp>

namespace loopr::llm {

/// Where a base URL points: `https://api.anthropic.com`, `http://127.0.0.1:8080/proxy`.
struct Endpoint {
  bool tls = true;
  std::string host;       ///< without brackets for IPv6
  std::string port;       ///< "443" / "80" unless given
  std::string base_path;  ///< prefix before `/v1/...`, no trailing '/'
};

/// True for `localhost`, 127.0.0.0/8 and ::1.
bool is_loopback_host(std::string_view host);

/// Parses a base URL. Plain `http://` is refused unless the host is loopback: API keys must not
/// cross a network in clear text.
Result<Endpoint> parse_base_url(std::string_view url);

struct HttpOptions {
  std::chrono::milliseconds connect_timeout{10'000};      ///< resolve + TCP connect + TLS handshake
  std::chrono::milliseconds first_byte_timeout{300'000};  ///< request sent → response head
  std::chrono::milliseconds idle_timeout{120'000};        ///< between two reads of the body
  std::string ca_file;                                    ///< extra trusted CAs (PEM)
  std::size_t max_idle_connections = 64;                  ///< kept open for reuse
};

struct HttpRequest {
  std::string method = "POST";
  std::string target;  ///< path and query, e.g. `/v1/messages`
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct HttpHead {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  ///< names in lower case

  /// The first header named `name` (lower case), if any.
  std::optional<std::string_view> header(std::string_view name) const;
};

/// Receives one response as it arrives: the head, then body bytes (already de-chunked).
class HttpSink {
 public:
  virtual ~HttpSink() = default;
  virtual void on_head(const HttpHead& head) = 0;
  /// Returns false to stop reading (the connection is then closed, not reused).
  virtual bool on_body(std::string_view bytes) = 0;
};

/// Why an exchange failed before the response was complete.
struct HttpFailure {
  enum class Kind {
    connect_failed,  ///< resolve or connect refused (nothing was sent)
    connect_timeout,
    tls_refused,  ///< the server's certificate was not trusted
    tls_failed,   ///< the TLS handshake broke for another reason
    first_byte_timeout,
    idle_timeout,
    connection_lost,  ///< closed or reset while sending or receiving
    bad_response,     ///< not parseable HTTP
  };
  Kind kind = Kind::connection_lost;
  std::string message;
  bool head_received = false;  ///< the sink has seen on_head
};

/// Where a model call's HTTP exchange goes: the network (HttpClient), or an in-process answerer
/// (llm/in_process.hpp: fast tests over the real wire code, no socket).
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  /// Sends `request` and streams the response into `sink`; nullopt: all of it was delivered.
  virtual awaitable<std::optional<HttpFailure>> send(const HttpRequest& request,
                                                     HttpSink& sink) = 0;
  virtual const Endpoint& endpoint() const = 0;
};

class HttpClient final : public HttpTransport {
 public:
  /// Fails if `ca_file` cannot be loaded.
  static Result<std::unique_ptr<HttpClient>> create(net::io_context& io, Endpoint endpoint,
                                                    HttpOptions options);
  struct Impl;
  explicit HttpClient(std::unique_ptr<Impl> impl);  ///< for create(); Impl is defined in the .cpp
  ~HttpClient() override;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// Sends `request` (adding Host, Content-Length) and streams the response into `sink`. A
  /// reused keep-alive connection that turns out closed before any response byte is replaced
  /// by a fresh one once. nullopt: the whole response was delivered.
  awaitable<std::optional<HttpFailure>> send(const HttpRequest& request, HttpSink& sink) override;

  const Endpoint& endpoint() const override;
  /// Connections opened so far (to prove reuse in tests and the bench).
  std::size_t connections_opened() const;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace loopr::llm
