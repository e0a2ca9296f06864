// The web UI's routes (`loopr web`, docs/guide.md "The web UI"): pages rendered from the control
// API's own answers (pages.hpp), the API's event stream for live updates, and the person's
// decisions sent as the very API calls the CLI makes. Every request first passes access.hpp.
// The daemon serves it as a FrontEnd (loopr/daemon/front_end.hpp, made by web::make_web_ui).
#pragma once

#include <memory>
#include <string>

#include <loopr/daemon/front_end.hpp>
#include <loopr/daemon/http.hpp>
#include <loopr/engine/engine.hpp>

#include "web/access.hpp"

namespace loopr::web {

using daemon::FrontEnd;

class WebUi final : public FrontEnd {
 public:
  /// `api`: the control API's routes (what it reads and does goes through them); `reads`: where
  /// files (artifacts, diffs, transcripts) are read, off the io thread.
  WebUi(engine::EngineContext& ctx, Routes api, net::thread_pool& reads, WebAccess access);
  ~WebUi() override;

  /// The routes for an HttpServer, with the security headers on every answer.
  Routes routes() override;

  awaitable<Response> handle(Request request);
  bool is_stream(const Request& request) const;
  awaitable<void> stream(Request request, std::shared_ptr<EventStream> out);

  const WebAccess& access() const;
  void set_port(std::uint16_t port) override;
  std::uint16_t port() const override;
  /// The address to open: `http://127.0.0.1:PORT/?token=…`.
  std::string url() const override;

  /// What the pages work on (the engine's context, the API, the reads pool, the access);
  /// ui.cpp's own.
  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace loopr::web
