// The web UI's HTML building blocks: THE escaping function every model-written string goes
// through, and the page frame. Pages are built as strings from small helpers; nothing here
// writes a value into HTML without `esc`.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include <loopr/core/figures.hpp>  // format_cost, format_age
#include <loopr/core/url.hpp>

namespace loopr::web {

/// `text` safe as HTML text and as a double- or single-quoted attribute value: & < > " ' escaped,
/// NUL and other C0 controls except tab and line breaks dropped, invalid UTF-8 replaced (U+FFFD),
/// a C1 control or bidirectional override shown as `<U+202E>` (core/text.hpp is_hidden_control):
/// the page never reorders or hides what the model wrote.
std::string esc(std::string_view text);

/// `/path?token=…` (the token on every URL the pages link to); `query` is more `k=v` pairs,
/// already encoded, joined with `&`.
std::string href(std::string_view path, std::string_view token, std::string_view query = {});

using loopr::url_encode;  ///< a URL path segment or query value (core/url.hpp)

/// An address from outside (the forge's PR URL): a link only when it is http(s) with nothing a
/// browser would read around it (no space, no control); else the escaped text, never a link.
std::string outside_link(std::string_view url);

std::string format_duration(std::int64_t ms);

/// `<span class="status s-running">running</span>`.
std::string status_badge(std::string_view status);

/// What a page says about itself: its `<title>`, the repository name in the header, the token
/// for the links, which nav item is current, and `since` (the last event seq the page shows, for
/// the live script; negative: the page is not live).
struct PageFrame {
  std::string title;
  std::string repo;
  std::string token;
  std::string nav;  ///< "tree" | "gate" | ""
  std::int64_t since = -1;
  int waiting = 0;    ///< plans at the gate + open questions (the gate's nav badge)
  std::string waits;  ///< what waits for the person, first in the title ("plan 001 at the gate")
};

/// A whole HTML document around `body` (already HTML): no inline script or style, the token in a
/// `<meta>` for the script, the script and style from `/static/`.
std::string page(const PageFrame& frame, std::string_view body);

}  // namespace loopr::web
