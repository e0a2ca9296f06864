// Who may use the web UI (`loopr web`): the pure checks every request passes before a route sees
// it. The UI listens on loopback behind a random token; a page's content is model-written, so the
// browser side is as strict as the server side (docs/guide.md "The web UI").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <loopr/daemon/http.hpp>

namespace loopr::web {

// The web UI is a front end of the daemon's HTTP server: it takes and answers its types.
using daemon::EventStream;
using daemon::Request;
using daemon::Response;
using daemon::Routes;

/// The secret and the address a web UI answers on.
struct WebAccess {
  std::string token;       ///< 64 hex digits
  std::uint16_t port = 0;  ///< on 127.0.0.1
};

/// 32 random bytes (getrandom) as 64 lowercase hex digits. Throws std::runtime_error when the
/// kernel gives no randomness.
std::string new_web_token();

/// Equal, in a time that does not depend on where the first difference is.
bool same_token(std::string_view a, std::string_view b);

/// The Host values the UI answers to: `127.0.0.1:PORT` and `localhost:PORT` (no other name can
/// reach it but by DNS rebinding).
bool allowed_host(std::string_view host, std::uint16_t port);

/// The Origin values a state-changing request may come from: the UI's own pages.
bool allowed_origin(std::string_view origin, std::uint16_t port);

/// Why a request is refused before any route runs, or nullopt. In this order: a Host that is not
/// the UI's (403: DNS rebinding), a method other than GET and POST (405), a missing or wrong
/// token (403; GET: the `token` query parameter, POST: the `token` form field, never a header or
/// cookie), and for POST an Origin that is not the UI's own or a `Sec-Fetch-Site` that is not
/// `same-origin` (403: cross-site request forgery).
std::optional<Response> refuse(const Request& req, const WebAccess& access);

/// The header fields every web answer carries: a Content-Security-Policy that lets a page load
/// and run only the UI's own script and style (no inline script, no other origin, no frames, forms
/// only to itself), no referrer (the token is in the URLs), no caching, no sniffing.
std::vector<std::pair<std::string, std::string>> web_security_headers();

/// A plain-text answer (refusals and errors) with `status`.
Response text_response(int status, std::string text);

}  // namespace loopr::web
