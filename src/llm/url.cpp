// Base URL parsing and the header lookup of http_client.hpp (kept out of the Beast TU).
#include <algorithm>
#include <cctype>
#include <charconv>

#include "llm/http_client.hpp"

namespace loopr::llm {

bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host == "::1") return true;
  // 127.0.0.0/8: four dotted numbers starting with 127.
  if (host.substr(0, 4) != "127.") return false;
  int parts = 0;
  std::size_t i = 0;
  while (i <= host.size()) {
    auto dot = host.find('.', i);
    auto part = host.substr(i, dot == std::string_view::npos ? std::string_view::npos : dot - i);
    int v = -1;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v > 255)
      return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    i = dot + 1;
  }
  return parts == 4;
}

Result<Endpoint> parse_base_url(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::invalid_argument,
                      "llm.base_url '" + std::string(url) + "' " + why);
  };
  Endpoint ep;
  std::string_view rest;
  if (url.substr(0, 8) == "https://") {
    rest = url.substr(8);
  } else if (url.substr(0, 7) == "http://") {
    ep.tls = false;
    rest = url.substr(7);
  } else {
    return bad("must start with https:// (or http:// for a server on this machine)");
  }
  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos)
    return bad("must not contain credentials (put the key in the environment)");
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:8080
    auto close = authority.find(']');
    if (close == std::string_view::npos) return bad("has an unclosed '[' in its host");
    ep.host = authority.substr(1, close - 1);
    auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("has junk after its host");
      port = after.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    ep.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (ep.host.empty()) return bad("has no host");
  std::transform(ep.host.begin(), ep.host.end(), ep.host.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (!port.empty()) {
    int p = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535)
      return bad("has a bad port");
    ep.port = port;
  } else {
    ep.port = ep.tls ? "443" : "80";
  }
  if (auto q = path.find_first_of("?#"); q != std::string_view::npos)
    return bad("must not have a query or fragment");
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  ep.base_path = path;
  if (!ep.tls && !is_loopback_host(ep.host))
    return bad(
        "uses plain http to another machine; use https (the API key would travel in "
        "clear text)");
  return ep;
}

std::optional<std::string_view> HttpHead::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return std::string_view(v);
  return std::nullopt;
}

}  // namespace loopr::llm
