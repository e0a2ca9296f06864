// The web UI's routes (`loopr web`, docs/guide.md "The web UI"): pages rendered from the control API's
// own answers (web_pages.hpp), the API's event stream for live updates, and the person's
// decisions sent as the very API calls the CLI makes. Every request first passes web_access.hpp.
#pragma once

#include <memory>
#include <string>

#include <loopr/daemon/http.hpp>
#include <loopr/engine/engine.hpp>

#include "daemon/api.hpp"
#include "daemon/web_access.hpp"

namespace loopr::daemon {

class WebUi {
 public:
  /// `reads`: where files (artifacts, diffs, transcripts) are read, off the io thread.
  WebUi(engine::EngineContext& ctx, Api& api, net::thread_pool& reads, WebAccess access);
  ~WebUi();

  /// The routes for an HttpServer, with the security headers on every answer.
  Routes routes();

  awaitable<Response> handle(Request request);
  bool is_stream(const Request& request) const;
  awaitable<void> stream(Request request, std::shared_ptr<EventStream> out);

  const WebAccess& access() const;
  /// The port it was bound to (known after HttpServer::listen_tcp, before any request).
  void set_port(std::uint16_t port);
  /// The address to open: `http://127.0.0.1:PORT/?token=…`.
  std::string url() const;

  /// What the pages work on (the engine's context, the API, the reads pool, the access);
  /// web_ui.cpp's own.
  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace loopr::daemon
