// The network side of mock-llm: HTTP/1.1 (keep-alive, optionally TLS) on one io_context,
// every connection a coroutine, every delay an async timer, so a thousand slow streams cost
// nothing. It carries out the Engine's ResponsePlans. No Asio/Beast in this header.
#pragma once

#include <cstdint>
#include <memory>
#include <mock_llm/engine.hpp>
#include <string>

namespace loopr::mock_llm {

struct ServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  ///< 0: any free port (see Server::port)
  std::string tls_cert;    ///< PEM certificate chain; with tls_key: serve HTTPS
  std::string tls_key;     ///< PEM private key
};

class Server {
 public:
  /// Binds and listens at once (so `port()` is known); throws std::runtime_error if it cannot.
  /// `engine` must outlive the server and is only used from the thread running `run()`.
  Server(Engine& engine, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  std::uint16_t port() const;
  bool tls() const;

  /// Makes SIGINT and SIGTERM call `stop()` from now on (call before announcing the port, so
  /// a signal sent right after never meets the default handler).
  void stop_on_signals();
  /// Serves until `stop()`.
  void run();
  /// Ends `run()` (callable from any thread); open connections are dropped.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loopr::mock_llm
