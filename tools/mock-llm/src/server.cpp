// The one mock-llm translation unit with Asio and Beast (they cost ~16 s and ~800 MB to compile).
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <mock_llm/server.hpp>
#include <optional>
#include <stdexcept>

#include <loopr/net/asio.hpp>

namespace loopr::mock_llm {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using namespace std::chrono_literals;

constexpr std::uint64_t kBodyLimit = 32ull * 1024 * 1024;  // the service's request size limit
constexpr auto kIdleTimeout = 300s;  // an idle keep-alive connection is closed after this
constexpr auto kWriteTimeout = 60s;  // a client that stops reading is dropped after this

const auto kRedirect = [](beast::error_code& ec) {
  return net::redirect_error(net::use_awaitable, ec);
};

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

enum class Sent { complete, dropped };

/// Appends `data` as one HTTP/1.1 chunk (hex size, CRLF, data, CRLF).
void append_chunk(std::string& out, const std::string& data) {
  char size[20];
  const int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  out.append(size, static_cast<std::size_t>(n));
  out += data;
  out += "\r\n";
}

template <typename Fields>
void apply_plan_headers(http::header<false, Fields>& h, const ResponsePlan& plan) {
  h.result(static_cast<unsigned>(plan.status));
  // Beast has no reason phrase for codes such as 529; the service says "Overloaded".
  if (http::int_to_status(static_cast<unsigned>(plan.status)) == http::status::unknown)
    h.reason(plan.status == 529 ? "Overloaded" : "Error");
  for (const auto& [name, value] : plan.headers) h.set(name, value);
}

awaitable<void> sleep_for(Millis d) {
  if (d.count() <= 0) co_return;
  net::steady_timer timer(co_await net::this_coro::executor);
  timer.expires_after(d);
  beast::error_code ec;
  co_await timer.async_wait(kRedirect(ec));
}

/// Keeps a connection open without answering until the client gives up and closes it.
template <typename Stream>
awaitable<void> wait_for_close(Stream& stream) {
  auto& tcp_stream = beast::get_lowest_layer(stream);
  tcp_stream.expires_never();
  char sink[512];
  beast::error_code ec;
  while (!ec) co_await tcp_stream.socket().async_read_some(net::buffer(sink), kRedirect(ec));
}

template <typename Stream>
awaitable<Sent> send_plan(Stream& stream, const ResponsePlan& plan, bool keep_alive,
                          unsigned version) {
  auto& tcp_stream = beast::get_lowest_layer(stream);
  tcp_stream.expires_never();  // delays and stalls are the point; the plan bounds them
  co_await sleep_for(plan.delay);
  if (plan.hang) {
    co_await wait_for_close(stream);
    co_return Sent::dropped;
  }
  beast::error_code ec;
  tcp_stream.expires_after(kWriteTimeout);
  if (!plan.streaming && !plan.cut_after && !plan.stall_after) {
    http::response<http::string_body> res;
    res.version(version);
    apply_plan_headers(res.base(), plan);
    res.body() = plan.body;
    res.keep_alive(keep_alive);
    res.prepare_payload();
    co_await http::async_write(stream, res, kRedirect(ec));
    co_return ec ? Sent::dropped : Sent::complete;
  }
  http::response<http::empty_body> res;
  res.version(version);
  apply_plan_headers(res.base(), plan);
  res.keep_alive(keep_alive);
  if (plan.streaming)
    res.chunked(true);
  else
    res.content_length(plan.body.size());  // promised in full, then cut or stalled
  http::response_serializer<http::empty_body> serializer{res};
  co_await http::async_write_header(stream, serializer, kRedirect(ec));
  if (ec) co_return Sent::dropped;

  if (!plan.streaming) {
    const std::size_t n = plan.cut_after ? *plan.cut_after : *plan.stall_after;
    co_await net::async_write(stream, net::buffer(plan.body.data(), n), kRedirect(ec));
    if (!ec && plan.stall_after) co_await wait_for_close(stream);
    co_return Sent::dropped;
  }
  // Where the stream stops early, if it does: a cut closes, a stall goes silent.
  std::size_t end = plan.events.size();
  if (plan.cut_after) end = std::min(end, *plan.cut_after);
  if (plan.stall_after) end = std::min(end, *plan.stall_after);
  const bool finishes = end == plan.events.size();
  if (plan.event_delay.count() <= 0) {
    // Nothing to pace: one write for all events (a syscall per event was most of the CPU per
    // streamed answer). Each event stays its own chunk, as the client sees it either way.
    std::string batch;
    for (std::size_t i = 0; i < end; ++i) append_chunk(batch, plan.events[i]);
    if (finishes) batch += "0\r\n\r\n";
    co_await net::async_write(stream, net::buffer(batch), kRedirect(ec));
    if (ec) co_return Sent::dropped;
  } else {
    for (std::size_t i = 0; i < end; ++i) {
      if (i > 0) co_await sleep_for(plan.event_delay);
      tcp_stream.expires_after(kWriteTimeout);
      co_await net::async_write(stream, http::make_chunk(net::buffer(plan.events[i])),
                                kRedirect(ec));
      if (ec) co_return Sent::dropped;
    }
    if (finishes) {
      co_await net::async_write(stream, http::make_chunk_last(), kRedirect(ec));
      if (ec) co_return Sent::dropped;
    }
  }
  if (finishes) co_return Sent::complete;
  if (!plan.cut_after || (plan.stall_after && *plan.stall_after < *plan.cut_after))
    co_await wait_for_close(stream);
  co_return Sent::dropped;
}

HttpRequest to_request(const http::request_parser<http::string_body>& parser,
                       std::int64_t arrival) {
  const auto& req = parser.get();
  HttpRequest out;
  out.method = std::string(req.method_string());
  out.target = std::string(req.target());
  for (const auto& field : req) {
    const auto name = field.name_string();
    out.headers.items.emplace_back(to_lower(std::string_view(name.data(), name.size())),
                                   std::string(field.value()));
  }
  out.body = req.body();
  out.arrival_ms = arrival;
  return out;
}

/// Serves requests on one connection until it closes; false if it must be dropped without a
/// clean (TLS) shutdown, as after a deliberately cut stream.
template <typename Stream>
awaitable<bool> session(Engine& engine, Stream& stream) {
  beast::flat_buffer buffer;
  auto& tcp_stream = beast::get_lowest_layer(stream);
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(64 * 1024);
    parser.body_limit(kBodyLimit);
    beast::error_code ec;
    tcp_stream.expires_after(kIdleTimeout);
    co_await http::async_read_header(stream, buffer, parser, kRedirect(ec));
    if (ec) co_return !(ec == beast::error::timeout);
    const std::int64_t arrival = now_ms();
    const unsigned version = parser.get().version();
    const bool keep_alive = parser.get().keep_alive();
    // curl sends `Expect: 100-continue` for big bodies and would wait a second without this.
    if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
      http::response<http::empty_body> cont{http::status::continue_, version};
      co_await http::async_write(stream, cont, kRedirect(ec));
      if (ec) co_return false;
    }
    tcp_stream.expires_after(kWriteTimeout);
    co_await http::async_read(stream, buffer, parser, kRedirect(ec));
    ResponsePlan plan;
    if (ec == http::error::body_limit) {
      plan = engine.reject_too_large(to_request(parser, arrival));
      plan.headers.emplace_back("connection", "close");
      co_await send_plan(stream, plan, false, version);
      co_return true;
    }
    if (ec) co_return false;
    try {
      plan = engine.handle(to_request(parser, arrival));
    } catch (const std::exception& e) {
      // A bug in mock-llm must fail the request that found it, not the whole server.
      plan = ResponsePlan{};
      plan.status = 500;
      plan.headers = {{"content-type", "text/plain"}};
      plan.body = std::string("mock-llm internal error: ") + e.what() + "\n";
    }
    Sent sent = co_await send_plan(stream, plan, keep_alive, version);
    if (sent == Sent::dropped) co_return false;
    if (!keep_alive) co_return true;
  }
}

}  // namespace

struct Server::Impl {
  Impl(Engine& e, ServerOptions o) : engine(e), options(std::move(o)) {}

  awaitable<void> serve(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::error_code ec;
    if (!tls_context) {
      const bool clean = co_await session(engine, stream);
      if (clean) stream.socket().shutdown(tcp::socket::shutdown_send, ec);
      stream.close();
      co_return;
    }
    beast::ssl_stream<beast::tcp_stream> tls_stream(std::move(stream), *tls_context);
    beast::get_lowest_layer(tls_stream).expires_after(30s);
    co_await tls_stream.async_handshake(ssl::stream_base::server, kRedirect(ec));
    if (ec) co_return;
    const bool clean = co_await session(engine, tls_stream);
    if (clean) {
      beast::get_lowest_layer(tls_stream).expires_after(5s);
      co_await tls_stream.async_shutdown(kRedirect(ec));
    }
    beast::get_lowest_layer(tls_stream).close();
  }

  awaitable<void> accept_loop() {
    for (;;) {
      beast::error_code ec;
      tcp::socket socket = co_await acceptor.async_accept(kRedirect(ec));
      if (!acceptor.is_open()) co_return;
      if (ec) {
        // Out of file descriptors or similar: back off briefly instead of spinning.
        co_await sleep_for(10ms);
        continue;
      }
      socket.set_option(tcp::no_delay(true), ec);  // SSE events must leave at once
      net::co_spawn(ioc, serve(std::move(socket)), net::detached);
    }
  }

  Engine& engine;
  ServerOptions options;
  net::io_context ioc{1};
  std::optional<ssl::context> tls_context;
  tcp::acceptor acceptor{ioc};
  std::optional<net::signal_set> signals;
};

Server::Server(Engine& engine, ServerOptions options)
    : impl_(std::make_unique<Impl>(engine, std::move(options))) {
  const ServerOptions& o = impl_->options;
  try {
    if (!o.tls_cert.empty() || !o.tls_key.empty()) {
      if (o.tls_cert.empty() || o.tls_key.empty())
        throw std::runtime_error("--tls-cert and --tls-key go together");
      impl_->tls_context.emplace(ssl::context::tls_server);
      impl_->tls_context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                                      ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                                      ssl::context::no_tlsv1_1);
      impl_->tls_context->use_certificate_chain_file(o.tls_cert);
      impl_->tls_context->use_private_key_file(o.tls_key, ssl::context::pem);
    }
    tcp::endpoint endpoint(net::ip::make_address(o.host), o.port);
    impl_->acceptor.open(endpoint.protocol());
    impl_->acceptor.set_option(net::socket_base::reuse_address(true));
    impl_->acceptor.bind(endpoint);
    impl_->acceptor.listen(net::socket_base::max_listen_connections);
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error("cannot serve on " + o.host + ":" + std::to_string(o.port) + ": " +
                             e.what());
  }
}

Server::~Server() = default;

std::uint16_t Server::port() const { return impl_->acceptor.local_endpoint().port(); }

bool Server::tls() const { return impl_->tls_context.has_value(); }

void Server::run() {
  net::co_spawn(impl_->ioc, impl_->accept_loop(), net::detached);
  impl_->ioc.run();
}

void Server::stop_on_signals() {
  impl_->signals.emplace(impl_->ioc, SIGINT, SIGTERM);
  impl_->signals->async_wait([this](const beast::error_code& ec, int) {
    if (!ec) stop();
  });
}

void Server::stop() { impl_->ioc.stop(); }

}  // namespace loopr::mock_llm
