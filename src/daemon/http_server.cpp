// The control API's HTTP/1.1 server on a Unix socket (and the web UI's on a loopback TCP port),
// the only translation unit with Beast's server side. Per connection, one coroutine reads requests
// (keep-alive), calls the routes and writes the JSON answers, and a watchdog coroutine closes the
// socket once its deadline passes (Boost 1.74 has no per-operation cancellation). An SSE answer is
// chunked and ends the connection when its route returns; while it runs, a third coroutine reads
// the socket so that a client that hangs up is noticed even when nothing is being written.
// clang-format off
#include <loopr/net/asio.hpp>  // first: it includes <utility> before any Asio header
// clang-format on

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <array>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <loopr/daemon/http.hpp>
#include <loopr/daemon/http_common.hpp>

#include "daemon/unix_socket_name.hpp"

namespace loopr::daemon {

namespace beast = boost::beast;
namespace http = beast::http;
using Protocol = net::local::stream_protocol;
using Tcp = net::ip::tcp;
/// A connection's socket, whichever listener accepted it (Unix or TCP).
using Socket = net::generic::stream_protocol::socket;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kNever = Clock::time_point::max();
constexpr std::size_t kFirstRead = 4096;

/// One accepted connection, shared by its request loop, its watchdog and (during an SSE answer)
/// its peer watcher and event writer. Everything runs on the io thread.
struct Session {
  explicit Session(Socket s)
      : socket(std::move(s)),
        watchdog(socket.get_executor()),
        wake(socket.get_executor(), kNever) {}

  Socket socket;
  beast::flat_buffer buffer;  ///< bytes read past the current request (pipelining) stay here
  bool open = true;
  bool handling = false;  ///< a route is running: stop() lets it answer before closing
  bool stopping = false;  ///< the server is stopping: the next answer closes the connection

  net::steady_timer watchdog;
  Clock::time_point deadline = kNever;

  // The SSE writer: one write on the socket at a time; concurrent senders queue in `outbox`
  // and wait on `wake` (never expires; cancelled to wake them) until their bytes are out.
  net::steady_timer wake;
  bool writing = false;
  std::string outbox;
  std::uint64_t queued = 0;
  std::uint64_t flushed = 0;

  /// The current I/O must finish within `d`, or the watchdog closes the connection.
  void expires_after(Clock::duration d) {
    deadline = Clock::now() + d;
    if (deadline < watchdog.expiry()) watchdog.cancel();  // re-arm it earlier
  }
  void expires_never() { deadline = kNever; }

  void close() {
    if (!open) return;
    open = false;
    error_code ec;
    socket.shutdown(net::socket_base::shutdown_both, ec);
    socket.close(ec);
    watchdog.cancel();
    wake.cancel();
  }
};

/// Closes the session once its deadline passes; ends when the session closes.
awaitable<void> watch_deadline(std::shared_ptr<Session> s) {
  while (s->open) {
    s->watchdog.expires_at(s->deadline);
    error_code ec;
    co_await s->watchdog.async_wait(net::redirect_error(net::use_awaitable, ec));
    if (s->open && Clock::now() >= s->deadline) s->close();
  }
}

/// During an SSE answer: reads (and ignores) whatever the client sends; EOF or an error means
/// the client is gone, so the session closes and the stream sees closed().
awaitable<void> watch_peer(std::shared_ptr<Session> s) {
  std::array<char, 512> scratch;
  while (s->open) {
    error_code ec;
    co_await s->socket.async_read_some(net::buffer(scratch),
                                       net::redirect_error(net::use_awaitable, ec));
    if (ec) break;
  }
  s->close();
}

/// Writes already-framed bytes in order, one socket write at a time. True once `bytes` are out.
awaitable<bool> write_ordered(std::shared_ptr<Session> s, std::string bytes,
                              Clock::duration timeout) {
  if (!s->open) co_return false;
  s->outbox += bytes;
  const std::uint64_t mine = ++s->queued;
  if (s->writing) {  // another sender is writing; it will write these bytes too
    while (s->open && s->flushed < mine) {
      error_code ec;
      co_await s->wake.async_wait(net::redirect_error(net::use_awaitable, ec));
    }
    co_return s->open && s->flushed >= mine;
  }
  s->writing = true;
  while (s->open && !s->outbox.empty()) {
    std::string batch;
    batch.swap(s->outbox);
    const std::uint64_t upto = s->queued;
    s->expires_after(timeout);
    error_code ec;
    co_await net::async_write(s->socket, net::buffer(batch),
                              net::redirect_error(net::use_awaitable, ec));
    s->expires_never();
    if (ec) {
      s->close();
      break;
    }
    s->flushed = upto;
    s->wake.cancel();
  }
  s->writing = false;
  s->wake.cancel();
  co_return s->open && s->flushed >= mine;
}

/// The EventStream a stream route writes to.
class SseWriter final : public EventStream {
 public:
  SseWriter(std::shared_ptr<Session> s, bool chunked, Clock::duration timeout)
      : s_(std::move(s)), chunked_(chunked), timeout_(timeout) {}

  awaitable<bool> send(std::string id, std::string event, std::string data) override {
    std::string bytes = frame(format_sse_message(id, event, data));
    bool ok = co_await write_ordered(s_, std::move(bytes), timeout_);
    co_return ok;
  }
  awaitable<bool> comment(std::string text) override {
    std::string bytes = frame(format_sse_comment(text));
    bool ok = co_await write_ordered(s_, std::move(bytes), timeout_);
    co_return ok;
  }
  bool closed() const override { return !s_->open; }

  /// Ends the body (the last chunk); the caller closes the connection after.
  awaitable<void> finish() {
    if (!chunked_) co_return;
    std::string last(kLastChunk);
    co_await write_ordered(s_, std::move(last), timeout_);
  }

 private:
  std::string frame(std::string message) const {
    return chunked_ ? format_chunk(message) : message;
  }
  std::shared_ptr<Session> s_;
  bool chunked_;
  Clock::duration timeout_;
};

bool is_http_error(const error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

/// An HTTP status for a request that could not be read, or nullopt when the client is simply
/// gone (EOF, reset, timed out, server stopping) and there is no one to answer.
std::optional<Response> read_failure(const error_code& ec, const ServerOptions& options) {
  if (ec == http::error::body_limit)
    return error_response(413, "the request body is larger than " +
                                   std::to_string(options.max_body_bytes) +
                                   " bytes (send a smaller one)");
  if (ec == http::error::header_limit)
    return error_response(431, "the request header is larger than " +
                                   std::to_string(options.max_header_bytes) + " bytes");
  if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec == http::error::short_read)
    return std::nullopt;
  if (is_http_error(ec)) return error_response(400, "bad HTTP request: " + ec.message());
  return std::nullopt;
}

std::string_view to_std(beast::string_view s) { return {s.data(), s.size()}; }

bool status_has_body(int status) { return status >= 200 && status != 204 && status != 304; }

/// Everything the server's coroutines share; they hold it by shared_ptr, so it outlives
/// the HttpServer object until the last connection is gone.
struct ServerState {
  ServerState(net::io_context& io_, Routes routes_, ServerOptions options_)
      : io(io_), routes(std::move(routes_)), options(options_), acceptor(io_), tcp_acceptor(io_) {}

  net::io_context& io;
  Routes routes;
  ServerOptions options;
  Protocol::acceptor acceptor;
  Tcp::acceptor tcp_acceptor;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions;
  bool listening = false;
  bool stopped = false;
  std::filesystem::path socket_path;
  dev_t socket_dev = 0;
  ino_t socket_ino = 0;

  void stop();
};

using ImplPtr = std::shared_ptr<ServerState>;

// Coroutines take their shared state by value (g++ 12: no capturing coroutine lambdas).
using Fields = std::vector<std::pair<std::string, std::string>>;

void set_fields(http::fields& res, const Fields& fields) {
  for (const auto& [name, value] : fields) res.set(name, value);
}

awaitable<bool> write_json(std::shared_ptr<Session> s, Response r, unsigned version,
                           bool keep_alive, Clock::duration timeout, const Fields& always) {
  if (r.status < 100 || r.status > 999) r.status = 500;
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  set_fields(res, always);
  res.set(http::field::content_type, r.text ? r.content_type : std::string("application/json"));
  set_fields(res, r.headers);
  res.keep_alive(keep_alive);
  if (status_has_body(r.status)) {
    if (r.text)
      res.body() = std::move(*r.text);
    else
      res.body() = r.body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  res.prepare_payload();
  s->expires_after(timeout);
  error_code ec;
  co_await http::async_write(s->socket, res, net::redirect_error(net::use_awaitable, ec));
  s->expires_never();
  co_return !ec;
}

awaitable<void> serve_stream(ImplPtr impl, std::shared_ptr<Session> s, Request req,
                             unsigned version) {
  const bool chunked = version >= 11;  // HTTP/1.0 has no chunks: the close ends the body
  http::response<http::empty_body> res{http::status::ok, version};
  set_fields(res, impl->routes.headers);
  res.set(http::field::content_type, "text/event-stream");
  res.set(http::field::cache_control, "no-cache");
  res.keep_alive(false);
  if (chunked) res.chunked(true);
  http::response_serializer<http::empty_body> sr{res};
  s->expires_after(impl->options.read_timeout);
  error_code ec;
  co_await http::async_write_header(s->socket, sr, net::redirect_error(net::use_awaitable, ec));
  s->expires_never();
  if (ec) co_return;

  net::co_spawn(impl->io, watch_peer(s), net::detached);
  auto writer = std::make_shared<SseWriter>(s, chunked, impl->options.read_timeout);
  std::shared_ptr<EventStream> stream = writer;
  try {
    co_await impl->routes.stream(std::move(req), stream);
  } catch (const std::exception& e) {
    spdlog::error("control API: an event stream route failed: {}", e.what());
  } catch (...) {
    spdlog::error("control API: an event stream route failed");
  }
  if (s->open) co_await writer->finish();
}

using RequestParser = http::request_parser<http::string_body>;
using Message = http::request<http::string_body>;

// Keep-alive: waits for the next request's first bytes; false when the peer is gone, was idle
// too long, or the server stopped.
awaitable<bool> wait_for_request(const ServerOptions& options, std::shared_ptr<Session> s) {
  if (s->buffer.size() != 0) co_return true;
  s->expires_after(options.idle_timeout);
  error_code ec;
  std::size_t n = co_await s->socket.async_read_some(s->buffer.prepare(kFirstRead),
                                                     net::redirect_error(net::use_awaitable, ec));
  if (ec) co_return false;
  s->buffer.commit(n);
  co_return true;
}

// Reads one request's header and body into `parser` within the read timeout.
awaitable<error_code> read_request(const ServerOptions& options, std::shared_ptr<Session> s,
                                   RequestParser& parser) {
  s->expires_after(options.read_timeout);
  parser.header_limit(static_cast<std::uint32_t>(
      std::min<std::size_t>(options.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  parser.body_limit(static_cast<std::uint64_t>(options.max_body_bytes));
  error_code ec;
  co_await http::async_read_header(s->socket, s->buffer, parser,
                                   net::redirect_error(net::use_awaitable, ec));
  if (!ec && !parser.is_done()) {
    // curl sends `Expect: 100-continue` before larger bodies and waits a second without it.
    if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
      std::string go_on = "HTTP/1.1 100 Continue\r\n\r\n";
      co_await net::async_write(s->socket, net::buffer(go_on),
                                net::redirect_error(net::use_awaitable, ec));
    }
    if (!ec)
      co_await http::async_read(s->socket, s->buffer, parser,
                                net::redirect_error(net::use_awaitable, ec));
  }
  s->expires_never();
  co_return ec;
}

// The routes' view of the message: header names in lower case, repeated ones joined.
Request to_request(Message& msg, Target target) {
  Request req;
  req.method = std::string(to_std(msg.method_string()));
  req.path = std::move(target.path);
  req.query = std::move(target.query);
  req.body = std::move(msg.body());
  for (const auto& field : msg) {
    std::string name(to_std(field.name_string()));
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto [it, fresh] = req.headers.try_emplace(std::move(name), to_std(field.value()));
    if (!fresh) it->second.append(", ").append(to_std(field.value()));
  }
  return req;
}

bool is_stream(const ServerState& impl, const Request& req) {
  try {
    return impl.routes.is_stream && impl.routes.stream && impl.routes.is_stream(req);
  } catch (const std::exception& e) {
    spdlog::error("control API: is_stream failed for {}: {}", req.path, e.what());
  }
  return false;
}

// The route's answer; a route that throws answers 500 (and the daemon goes on).
awaitable<Response> answer_request(ImplPtr impl, std::shared_ptr<Session> s, Request req,
                                   std::string method, std::string target) {
  Response answer;
  std::string failure;
  s->handling = true;
  try {
    if (impl->routes.handle) {
      answer = co_await impl->routes.handle(std::move(req));
    } else {
      answer = error_response(404, "no such route");
    }
  } catch (const std::exception& e) {
    failure = e.what();
    if (failure.empty()) failure = "unknown error";
  } catch (...) {
    failure = "unknown error";
  }
  s->handling = false;
  if (!failure.empty()) {
    spdlog::error("control API: {} {} failed: {}", method, target, failure);
    answer = error_response(500, "internal error: " + failure + " (see the daemon log)");
  }
  co_return answer;
}

awaitable<void> serve_requests(ImplPtr impl, std::shared_ptr<Session> s) {
  const ServerOptions& options = impl->options;
  while (s->open) {
    if (!co_await wait_for_request(options, s)) co_return;
    RequestParser parser;
    if (error_code ec = co_await read_request(options, s, parser)) {
      auto answer = read_failure(ec, options);
      if (answer && s->open)
        co_await write_json(s, std::move(*answer), 11, false, options.read_timeout,
                            impl->routes.headers);
      co_return;
    }

    auto& msg = parser.get();
    const unsigned version = msg.version();
    bool keep_alive = msg.keep_alive();
    auto target = parse_target(to_std(msg.target()));
    if (!target.ok()) {
      auto answer = error_response(400, target.error().message);
      bool written = co_await write_json(s, std::move(answer), version, keep_alive,
                                         options.read_timeout, impl->routes.headers);
      if (!written || !keep_alive) co_return;
      continue;
    }
    Request req = to_request(msg, std::move(*target));
    if (is_stream(*impl, req)) {
      co_await serve_stream(impl, s, std::move(req), version);
      co_return;
    }
    Response answer =
        co_await answer_request(impl, s, std::move(req), std::string(to_std(msg.method_string())),
                                std::string(to_std(msg.target())));
    if (!s->open) co_return;
    keep_alive = keep_alive && !s->stopping;
    bool written = co_await write_json(s, std::move(answer), version, keep_alive,
                                       options.read_timeout, impl->routes.headers);
    if (!written || !keep_alive) co_return;
  }
}

awaitable<void> serve(ImplPtr impl, std::shared_ptr<Session> s) {
  try {
    co_await serve_requests(impl, s);
  } catch (const std::exception& e) {
    spdlog::error("control API: connection failed: {}", e.what());
  } catch (...) {
    spdlog::error("control API: connection failed");
  }
  s->close();
  impl->sessions.erase(s.get());
}

// A refused peer gets one 403 answer (written at once, never waited for) and the end.
void refuse_connection(int fd, const std::string& why) {
  std::string body = nlohmann::json{{"error", why}}.dump();
  std::string answer = "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
                       "Connection: close\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)::send(fd, answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
}

template <typename Acceptor>
awaitable<void> accept_connections(ImplPtr impl, Acceptor& acceptor) {
  while (!impl->stopped && acceptor.is_open()) {
    typename Acceptor::protocol_type::socket socket(impl->io);
    error_code ec;
    co_await acceptor.async_accept(socket, net::redirect_error(net::use_awaitable, ec));
    if (impl->stopped) break;
    if (ec) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) break;
      // Out of file descriptors (EMFILE/ENFILE) or a connection aborted before it was accepted:
      // the server stays up; back off briefly so an fd shortage does not spin the io thread.
      spdlog::warn("control API: accept failed: {}", ec.message());
      net::steady_timer pause(impl->io, std::chrono::milliseconds(50));
      co_await pause.async_wait(net::redirect_error(net::use_awaitable, ec));
      continue;
    }
    if (impl->sessions.size() >= impl->options.max_connections) {
      socket.close(ec);  // over the cap: accepted and closed at once
      continue;
    }
    if (impl->options.admit) {
      if (auto refused = impl->options.admit(socket.native_handle())) {
        refuse_connection(socket.native_handle(), *refused);
        socket.close(ec);
        continue;
      }
    }
    try {
      auto s = std::make_shared<Session>(Socket(std::move(socket)));
      impl->sessions.emplace(s.get(), s);
      net::co_spawn(impl->io, watch_deadline(s), net::detached);
      net::co_spawn(impl->io, serve(impl, s), net::detached);
    } catch (const std::exception& e) {
      spdlog::error("control API: cannot serve a connection: {}", e.what());
    }
  }
}

void ServerState::stop() {
  if (stopped) return;
  stopped = true;
  error_code ec;
  acceptor.close(ec);
  tcp_acceptor.close(ec);
  if (listening && !socket_path.empty()) {
    // Remove the socket file only if it is still ours (a new daemon may have replaced it).
    struct stat st {};
    if (::lstat(socket_path.c_str(), &st) == 0 && st.st_dev == socket_dev &&
        st.st_ino == socket_ino)
      ::unlink(socket_path.c_str());
  }
  for (auto& [ptr, weak] : sessions) {
    auto s = weak.lock();
    if (!s) continue;
    s->stopping = true;
    if (!s->handling) s->close();
  }
}

}  // namespace

struct HttpServer::Impl final : ServerState {
  using ServerState::ServerState;
};

HttpServer::HttpServer(net::io_context& io, Routes routes, ServerOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(routes), options)) {}

HttpServer::~HttpServer() { impl_->stop(); }

Result<void> HttpServer::listen(const std::filesystem::path& socket) {
  auto& impl = *impl_;
  if (impl.stopped || impl.listening)
    return make_error(
        ErrorCode::invalid_argument,
        "the control API server is already " + std::string(impl.stopped ? "stopped" : "listening"));
  const std::string where = socket.string();
  auto name = UnixSocketName::make(socket);
  if (!name.ok()) return make_error(ErrorCode::io, name.error().message);

  struct stat st {};
  if (::lstat(socket.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return make_error(ErrorCode::io, "cannot listen on " + where + ": it is a folder");
    if (::unlink(socket.c_str()) != 0)
      return make_error(ErrorCode::io,
                        "cannot remove the old socket " + where + ": " + std::strerror(errno));
  }

  error_code ec;
  Protocol::endpoint endpoint(name->name());
  impl.acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl.acceptor.bind(endpoint, ec);
  if (ec) {
    impl.acceptor.close(ec);
    return make_error(ErrorCode::io,
                      "cannot bind the control socket " + where + ": " + ec.message());
  }
  // Owner only: the socket controls the daemon. Nobody can connect before listen() below.
  if (::chmod(name->name().c_str(), 0600) != 0 || ::lstat(name->name().c_str(), &st) != 0) {
    int e = errno;
    impl.acceptor.close(ec);
    ::unlink(name->name().c_str());
    return make_error(ErrorCode::io, "cannot restrict the control socket " + where +
                                         " to its owner: " + std::strerror(e));
  }
  impl.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    impl.acceptor.close(ec);
    ::unlink(name->name().c_str());
    return make_error(ErrorCode::io, "cannot listen on " + where + ": " + ec.message());
  }
  impl.listening = true;
  impl.socket_path = socket;
  impl.socket_dev = st.st_dev;
  impl.socket_ino = st.st_ino;
  net::co_spawn(impl.io, accept_connections(impl_, impl.acceptor), net::detached);
  return ok();
}

Result<std::uint16_t> HttpServer::listen_tcp(const std::string& address, std::uint16_t port) {
  auto& impl = *impl_;
  if (impl.stopped || impl.listening)
    return make_error(
        ErrorCode::invalid_argument,
        "the HTTP server is already " + std::string(impl.stopped ? "stopped" : "listening"));
  error_code ec;
  auto ip = net::ip::make_address(address, ec);
  if (ec) return make_error(ErrorCode::invalid_argument, "not an IP address: " + address);
  const std::string where = address + ":" + std::to_string(port);
  Tcp::endpoint endpoint(ip, port);
  impl.tcp_acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl.tcp_acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl.tcp_acceptor.bind(endpoint, ec);
  if (!ec) impl.tcp_acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    impl.tcp_acceptor.close(ignored);
    return make_error(ErrorCode::io, "cannot listen on " + where + ": " + ec.message());
  }
  // The daemon's children must not inherit the listening socket.
  ::fcntl(impl.tcp_acceptor.native_handle(), F_SETFD, FD_CLOEXEC);
  impl.listening = true;
  const std::uint16_t bound = impl.tcp_acceptor.local_endpoint(ec).port();
  net::co_spawn(impl.io, accept_connections(impl_, impl.tcp_acceptor), net::detached);
  return bound;
}

void HttpServer::stop() { impl_->stop(); }

std::size_t HttpServer::connections() const { return impl_->sessions.size(); }

}  // namespace loopr::daemon
