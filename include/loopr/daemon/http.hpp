// The control API's transport: HTTP/1.1 over the repository's Unix socket (DESIGN.md "Processes
// and interfaces"), and the same server on a loopback TCP port for the web UI (`loopr web`). The
// server side is generic (routes are the daemon's business); the client side is what the CLI
// uses. Boost.Beast lives only in src/daemon/http_server.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <loopr/core/result.hpp>
#include <loopr/core/sse.hpp>
#include <loopr/net/asio.hpp>

namespace loopr::daemon {

/// One request as the routes see it.
struct Request {
  std::string method;                        ///< "GET", "POST", …
  std::string path;                          ///< "/v1/loops/001" (percent-decoded, no query)
  std::map<std::string, std::string> query;  ///< decoded query parameters
  std::string body;                          ///< raw body (JSON for POSTs)
  /// Header fields, names in lower case; a field sent more than once has its values joined
  /// with ", " (so a doubled `Host` matches no single host name).
  std::map<std::string, std::string> headers;

  /// The value of header `lower_name`, or "" when it was not sent.
  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

/// A JSON answer. Errors use `{"error": "what went wrong (what to do)"}`. With `text` set, the
/// answer is those bytes as `content_type` instead (the web UI's pages and assets).
struct Response {
  Response() = default;
  Response(int status_, nlohmann::json body_) : status(status_), body(std::move(body_)) {}

  int status = 200;
  nlohmann::json body = nlohmann::json::object();
  std::optional<std::string> text;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;  ///< more fields (e.g. Location)
};

Response error_response(int status, std::string message);

/// Writes a server-sent-events stream to one client (text/event-stream, chunked or
/// close-delimited).
class EventStream {
 public:
  virtual ~EventStream() = default;
  /// One SSE message (`id:`, `event:`, `data:` lines + blank line). False once the client is gone.
  virtual awaitable<bool> send(std::string id, std::string event, std::string data) = 0;
  /// A `: text` comment line (keep-alive). False once the client is gone.
  virtual awaitable<bool> comment(std::string text) = 0;
  /// True once a write failed or the peer closed.
  virtual bool closed() const = 0;
};

struct Routes {
  /// Ordinary requests.
  std::function<awaitable<Response>(Request)> handle;
  /// True if this request is answered with a stream (then `stream` is called instead of `handle`).
  std::function<bool(const Request&)> is_stream;
  /// Runs for the life of one SSE response; returning ends the response.
  std::function<awaitable<void>(Request, std::shared_ptr<EventStream>)> stream;
  /// Header fields every answer carries, streams and refusals included (the web UI's
  /// Content-Security-Policy and friends).
  std::vector<std::pair<std::string, std::string>> headers;
};

struct ServerOptions {
  std::size_t max_body_bytes = 1 << 20;            ///< larger → 413, connection closed
  std::size_t max_header_bytes = 16 << 10;         ///< larger → 431/400, connection closed
  std::chrono::milliseconds idle_timeout{60'000};  ///< keep-alive connection with no request
  std::chrono::milliseconds read_timeout{10'000};  ///< a started request must arrive within this
  std::size_t max_connections = 4096;              ///< more are accepted and closed at once
  /// Called with each accepted connection's descriptor before anything is read from it: a
  /// refusal (the reason) answers 403 with it and closes (docs/security.md, B2). None: all in.
  std::function<std::optional<std::string>(int fd)> admit;
};

/// Serves `routes` on a Unix socket (mode 0600) or a loopback TCP port on `io` (single-threaded:
/// every route runs on the io thread). Bad HTTP → 400 and close; unknown problems never end the
/// server.
class HttpServer {
 public:
  HttpServer(net::io_context& io, Routes routes, ServerOptions options = {});
  ~HttpServer();
  /// Binds `socket` (an existing file at that path is removed first: the caller has made sure no
  /// live daemon owns it), chmod 0600, starts accepting.
  Result<void> listen(const std::filesystem::path& socket);
  /// Listens on TCP `address` (an IP literal, e.g. "127.0.0.1"), `port` (0: a free one); returns
  /// the port. ErrorCode::io when it cannot bind (the port is taken).
  Result<std::uint16_t> listen_tcp(const std::string& address, std::uint16_t port);
  /// Stops accepting and closes every connection (streams see `closed()`); idempotent.
  void stop();
  std::size_t connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// ---------------------------------------------------------------- client (blocking, for the CLI)

struct ClientResponse {
  int status = 0;
  nlohmann::json body;  ///< parsed JSON (null if the body was empty or not JSON)
};

/// An answer as it came: a client that only passes it on need not parse it.
struct RawResponse {
  int status = 0;
  std::string body;
};

/// One message of an SSE stream (`id`, `event`, `data`), as the one parser reads it.
using SseMessage = SseEvent;

/// A blocking client of the daemon's socket. Each call opens its own connection.
class Client {
 public:
  explicit Client(std::filesystem::path socket) : socket_(std::move(socket)) {}

  /// Nothing listens on the socket (no file, refused, not a socket): ErrorCode::not_found with a
  /// message naming the socket. Other transport failures: ErrorCode::io; timeout:
  /// ErrorCode::timeout.
  Result<ClientResponse> call(const std::string& method, const std::string& target,
                              const nlohmann::json& body = nullptr,
                              std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

  /// `call` without parsing the answer.
  Result<RawResponse> call_raw(const std::string& method, const std::string& target,
                               const nlohmann::json& body = nullptr,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

  /// GETs `target` as an SSE stream and hands every message to `on_message` until it returns
  /// false (→ ok), `cancel` becomes true (checked at least every 200 ms; → ok), or the server
  /// ends the stream (→ ErrorCode::io "the daemon closed the stream"). Connect failures as `call`.
  Result<void> stream(const std::string& target,
                      const std::function<bool(const SseMessage&)>& on_message,
                      const std::atomic<bool>* cancel = nullptr) const;

  const std::filesystem::path& socket() const { return socket_; }

 private:
  std::filesystem::path socket_;
};

}  // namespace loopr::daemon
