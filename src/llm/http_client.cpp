// The one Beast + OpenSSL translation unit of loopr's model clients (compiling it is slow, so
// nothing else includes Beast). Timeouts come from tcp_stream::expires_after: Boost 1.74 has
// no per-operation cancellation, and an expiry fails the pending operation with `timeout`.
#include "llm/http_client.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <limits>
#include <variant>

#include <loopr/net/asio.hpp>

namespace loopr::llm {

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;
using Kind = HttpFailure::Kind;

namespace {

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

/// One connection; the buffer belongs to it because it may hold bytes read past a response.
struct Connection {
  explicit Connection(net::io_context& io) : stream(std::in_place_index<0>, io) {}
  Connection(net::io_context& io, ssl::context& tls) : stream(std::in_place_index<1>, io, tls) {}

  std::variant<beast::tcp_stream, TlsStream> stream;
  beast::flat_buffer buffer;

  beast::tcp_stream& lowest() {
    if (auto* plain = std::get_if<beast::tcp_stream>(&stream)) return *plain;
    return beast::get_lowest_layer(std::get<TlsStream>(stream));
  }
};

HttpFailure failure(Kind kind, std::string message, bool head_received = false) {
  return HttpFailure{kind, std::move(message), head_received};
}

bool is_ip_literal(const std::string& host) {
  error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

struct HttpClient::Impl {
  net::io_context& io;
  Endpoint endpoint;
  HttpOptions options;
  std::string host_header;
  ssl::context tls_context{ssl::context::tls_client};
  std::vector<std::unique_ptr<Connection>> idle;  // most recently used last
  std::size_t opened = 0;

  Impl(net::io_context& io_, Endpoint ep, HttpOptions opts)
      : io(io_), endpoint(std::move(ep)), options(std::move(opts)) {
    bool v6 = endpoint.host.find(':') != std::string::npos;
    host_header = v6 ? "[" + endpoint.host + "]" : endpoint.host;
    if (endpoint.port != (endpoint.tls ? "443" : "80")) host_header += ":" + endpoint.port;
  }

  std::string where() const { return host_header; }

  /// Resolve, connect and (for https) handshake, all within connect_timeout.
  awaitable<std::optional<HttpFailure>> connect(Connection& conn) {
    auto deadline = Clock::now() + options.connect_timeout;
    error_code ec;
    // The resolver is not governed by the stream's expiry: a timer cancels it. The resolver is
    // shared so that a timer firing after this frame is gone finds nothing to cancel.
    auto resolver = std::make_shared<tcp::resolver>(io);
    net::steady_timer watchdog(io);
    watchdog.expires_at(deadline);
    watchdog.async_wait([weak = std::weak_ptr<tcp::resolver>(resolver)](error_code e) {
      if (auto r = weak.lock(); r && !e) r->cancel();
    });
    auto results = co_await resolver->async_resolve(endpoint.host, endpoint.port,
                                                    net::redirect_error(net::use_awaitable, ec));
    watchdog.cancel();
    if (ec == net::error::operation_aborted)
      co_return failure(Kind::connect_timeout, "resolving " + endpoint.host + " timed out");
    if (ec)
      co_return failure(Kind::connect_failed,
                        "cannot resolve " + endpoint.host + ": " + ec.message());

    auto& tcp_stream = conn.lowest();
    tcp_stream.expires_at(deadline);
    co_await tcp_stream.async_connect(results, net::redirect_error(net::use_awaitable, ec));
    if (ec == beast::error::timeout)
      co_return failure(Kind::connect_timeout, "connecting to " + where() + " timed out");
    if (ec)
      co_return failure(Kind::connect_failed, "cannot connect to " + where() + ": " + ec.message());
    tcp_stream.socket().set_option(tcp::no_delay(true), ec);
    ++opened;

    if (auto* tls = std::get_if<TlsStream>(&conn.stream)) {
      // SNI only for names (RFC 6066 forbids IP literals); the callback checks the name or IP.
      if (!is_ip_literal(endpoint.host) &&
          !SSL_set_tlsext_host_name(tls->native_handle(), endpoint.host.c_str()))
        co_return failure(Kind::tls_failed, "cannot set the TLS server name " + endpoint.host);
      tls->set_verify_callback(ssl::host_name_verification(endpoint.host));
      co_await tls->async_handshake(ssl::stream_base::client,
                                    net::redirect_error(net::use_awaitable, ec));
      if (ec == beast::error::timeout)
        co_return failure(Kind::connect_timeout,
                          "the TLS handshake with " + where() + " timed out");
      if (ec) {
        long verify = SSL_get_verify_result(tls->native_handle());
        bool refused =
            verify != X509_V_OK || (ec.category() == net::error::get_ssl_category() &&
                                    ERR_GET_REASON(static_cast<unsigned long>(ec.value())) ==
                                        SSL_R_CERTIFICATE_VERIFY_FAILED);
        if (refused) {
          std::string why = verify != X509_V_OK ? X509_verify_cert_error_string(verify)
                                                : "it does not name " + endpoint.host;
          co_return failure(Kind::tls_refused,
                            "the TLS certificate of " + where() + " is not trusted (" + why +
                                "); if it is signed by a private CA, set llm.ca_file to that "
                                "CA's PEM file");
        }
        co_return failure(Kind::tls_failed,
                          "the TLS handshake with " + where() + " failed: " + ec.message());
      }
    }
    tcp_stream.expires_never();
    co_return std::nullopt;
  }

  /// Writes the request and reads the response into `sink`. `keep` tells whether the
  /// connection may be reused afterwards.
  template <typename Stream>
  awaitable<std::optional<HttpFailure>> exchange(Stream& stream, Connection& conn,
                                                 const http::request<http::string_body>& req,
                                                 HttpSink& sink, bool& keep) {
    keep = false;
    error_code ec;
    auto& tcp_stream = conn.lowest();
    tcp_stream.expires_after(options.first_byte_timeout);
    co_await http::async_write(stream, req, net::redirect_error(net::use_awaitable, ec));
    if (ec == beast::error::timeout)
      co_return failure(Kind::first_byte_timeout,
                        "sending the request to " + where() + " timed out");
    if (ec)
      co_return failure(Kind::connection_lost,
                        "the connection to " + where() + " broke while sending: " + ec.message());

    http::response_parser<http::buffer_body> parser;
    // SSE streams are long; the sink decides what to keep. Not boost::none: Boost 1.74 compares
    // a Content-Length against the empty optional and fails every such body with body_limit.
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    co_await http::async_read_header(stream, conn.buffer, parser,
                                     net::redirect_error(net::use_awaitable, ec));
    if (ec == beast::error::timeout)
      co_return failure(Kind::first_byte_timeout,
                        "no response from " + where() + " within " +
                            std::to_string(options.first_byte_timeout.count()) + " ms");
    if (ec == net::error::eof || ec == http::error::end_of_stream ||
        ec == net::error::connection_reset || ec == ssl::error::stream_truncated)
      co_return failure(Kind::connection_lost,
                        where() + " closed the connection before answering: " + ec.message());
    if (ec)
      co_return failure(Kind::bad_response,
                        "bad HTTP response from " + where() + ": " + ec.message());

    HttpHead head;
    head.status = static_cast<int>(parser.get().result_int());
    for (const auto& field : parser.get()) {
      std::string name(field.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      head.headers.emplace_back(std::move(name), std::string(field.value()));
    }
    sink.on_head(head);

    std::array<char, 16 * 1024> chunk;
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      tcp_stream.expires_after(options.idle_timeout);
      co_await http::async_read_some(stream, conn.buffer, parser,
                                     net::redirect_error(net::use_awaitable, ec));
      if (ec == http::error::need_buffer) ec = {};  // the chunk buffer is full: normal
      std::size_t n = chunk.size() - parser.get().body().size;
      if (n > 0 && !sink.on_body(std::string_view(chunk.data(), n))) co_return std::nullopt;
      if (ec == beast::error::timeout)
        co_return failure(Kind::idle_timeout,
                          where() + " sent nothing for " +
                              std::to_string(options.idle_timeout.count()) +
                              " ms in the middle of the response",
                          true);
      if (ec)
        co_return failure(Kind::connection_lost,
                          "the response from " + where() + " was cut: " + ec.message(), true);
    }
    tcp_stream.expires_never();
    keep = parser.keep_alive();
    co_return std::nullopt;
  }

  std::unique_ptr<Connection> new_connection() {
    if (endpoint.tls) return std::make_unique<Connection>(io, tls_context);
    return std::make_unique<Connection>(io);
  }
};

Result<std::unique_ptr<HttpClient>> HttpClient::create(net::io_context& io, Endpoint endpoint,
                                                       HttpOptions options) {
  auto impl = std::make_unique<Impl>(io, std::move(endpoint), std::move(options));
  if (impl->endpoint.tls) {
    error_code ec;
    auto& ctx = impl->tls_context;
    ctx.set_verify_mode(ssl::verify_peer);
    SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
    ctx.set_default_verify_paths(ec);
    if (ec)
      return make_error(ErrorCode::io, "cannot load the system CA certificates: " + ec.message());
    if (!impl->options.ca_file.empty()) {
      ctx.load_verify_file(impl->options.ca_file, ec);
      if (ec)
        return make_error(ErrorCode::invalid_argument, "llm.ca_file '" + impl->options.ca_file +
                                                           "' cannot be loaded: " + ec.message());
    }
  }
  return std::make_unique<HttpClient>(std::move(impl));
}

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::~HttpClient() = default;

const Endpoint& HttpClient::endpoint() const { return impl_->endpoint; }
std::size_t HttpClient::connections_opened() const { return impl_->opened; }

awaitable<std::optional<HttpFailure>> HttpClient::send(const HttpRequest& request, HttpSink& sink) {
  Impl& impl = *impl_;
  http::request<http::string_body> req{http::string_to_verb(request.method), request.target, 11};
  req.set(http::field::host, impl.host_header);
  for (const auto& [name, value] : request.headers) req.set(name, value);
  req.body() = request.body;
  req.prepare_payload();

  // A pooled connection the server has meanwhile closed fails before any response byte; then
  // one fresh connection is tried (the server cannot have acted on a request it never read).
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<Connection> conn;
    bool reused = false;
    if (!impl.idle.empty() && attempt == 0) {
      conn = std::move(impl.idle.back());
      impl.idle.pop_back();
      reused = true;
    } else {
      conn = impl.new_connection();
      auto failed = co_await impl.connect(*conn);
      if (failed) co_return failed;
    }
    bool keep = false;
    std::optional<HttpFailure> failed;
    if (auto* plain = std::get_if<beast::tcp_stream>(&conn->stream))
      failed = co_await impl.exchange(*plain, *conn, req, sink, keep);
    else
      failed = co_await impl.exchange(std::get<TlsStream>(conn->stream), *conn, req, sink, keep);
    if (failed && reused && !failed->head_received && failed->kind == Kind::connection_lost)
      continue;
    if (!failed && keep && impl.idle.size() < impl.options.max_idle_connections)
      impl.idle.push_back(std::move(conn));
    co_return failed;
  }
}

}  // namespace loopr::llm
