#include "web/access.hpp"

#include <sys/random.h>

#include <cctype>
#include <cerrno>
#include <stdexcept>
#include <loopr/daemon/http_common.hpp>

namespace loopr::web {

using daemon::parse_form;

std::string new_web_token() {
  unsigned char bytes[32];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("getrandom failed: no randomness for the web UI's token");
    }
    got += static_cast<std::size_t>(n);
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out.push_back(hex[b >> 4]);
    out.push_back(hex[b & 15]);
  }
  return out;
}

bool same_token(std::string_view a, std::string_view b) {
  if (a.size() != b.size() || a.empty()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

namespace {

bool equals_nocase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::string port_text(std::uint16_t port) { return std::to_string(port); }

/// The `token` query parameter of a GET, the `token` form field of a POST.
std::string token_of(const Request& req) {
  if (req.method == "GET") {
    auto it = req.query.find("token");
    return it == req.query.end() ? std::string() : it->second;
  }
  auto form = parse_form(req.body);
  if (!form) return {};
  auto it = form->find("token");
  return it == form->end() ? std::string() : it->second;
}

}  // namespace

bool allowed_host(std::string_view host, std::uint16_t port) {
  const std::string p = port_text(port);
  return equals_nocase(host, "127.0.0.1:" + p) || equals_nocase(host, "localhost:" + p);
}

bool allowed_origin(std::string_view origin, std::uint16_t port) {
  const std::string p = port_text(port);
  return equals_nocase(origin, "http://127.0.0.1:" + p) ||
         equals_nocase(origin, "http://localhost:" + p);
}

Response text_response(int status, std::string text) {
  Response r;
  r.status = status;
  r.text = std::move(text);
  r.content_type = "text/plain; charset=utf-8";
  return r;
}

std::optional<Response> refuse(const Request& req, const WebAccess& access) {
  const std::string host = req.header("host");
  if (!allowed_host(host, access.port))
    return text_response(403, "loopr: this server answers only to http://127.0.0.1:" +
                                  port_text(access.port) + " (the Host header names another)\n");
  if (req.method != "GET" && req.method != "POST") {
    Response r = text_response(405, "loopr: only GET and POST are allowed here\n");
    r.headers.emplace_back("Allow", "GET, POST");
    return r;
  }
  if (!same_token(token_of(req), access.token))
    return text_response(403,
                         "loopr: the token is missing or wrong (open the URL that `loopr web` "
                         "prints; `loopr daemon status` shows it again)\n");
  if (req.method == "POST") {
    if (!allowed_origin(req.header("origin"), access.port))
      return text_response(403,
                           "loopr: a change must come from this UI's own pages (the Origin header "
                           "is missing or names another site)\n");
    const std::string site = req.header("sec-fetch-site");
    if (!site.empty() && site != "same-origin")
      return text_response(
          403, "loopr: a change must come from this UI's own pages (" + site + " request)\n");
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> web_security_headers() {
  return {{"Content-Security-Policy",
           "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
           "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "DENY"},
          // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with
          // the page's own form POSTs, which the Origin check must refuse; same-origin still
          // keeps the address (and its token) from every other site.
          {"Referrer-Policy", "same-origin"},
          {"Cache-Control", "no-store"},
          {"Cross-Origin-Opener-Policy", "same-origin"},
          {"Cross-Origin-Resource-Policy", "same-origin"}};
}

}  // namespace loopr::web
