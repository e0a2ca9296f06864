// A front end the daemon serves on a loopback TCP port besides the control API: the web UI
// (src/web/, `loopr web`). The daemon owns its listener and its life (`POST /v1/web`, `/stop`);
// the front end is made by whoever starts the daemon (DaemonOptions::web), so that the daemon
// does not depend on it, and it acts only through the control API's routes it is given.
#pragma once

#include <cstdint>
#include <string>

#include <loopr/daemon/http.hpp>

namespace loopr::engine {
struct EngineContext;
}

namespace loopr::daemon {

class FrontEnd {
 public:
  virtual ~FrontEnd() = default;
  /// The routes for its HttpServer.
  virtual Routes routes() = 0;
  /// The port it was bound to (known after HttpServer::listen_tcp, before any request).
  virtual void set_port(std::uint16_t port) = 0;
  virtual std::uint16_t port() const = 0;
  /// The address to open (`http://127.0.0.1:PORT/…`).
  virtual std::string url() const = 0;
};

/// What a front end is made from.
struct FrontEndDeps {
  engine::EngineContext& ctx;
  Routes api;               ///< the control API (Api::routes): its only way to read and act
  net::thread_pool& reads;  ///< where it reads files, off the io thread
};

}  // namespace loopr::daemon
