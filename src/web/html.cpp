#include "web/html.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include <loopr/core/utf8.hpp>

namespace loopr::web {

std::string esc(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const Utf8Step step = utf8_step(text, i);
      if (!step.valid)
        out += "\xEF\xBF\xBD";  // U+FFFD, as valid_utf8 (core/text.hpp)
      else if (is_hidden_control(step.cp))
        out += esc(code_point_label(step.cp));  // a bidi override reorders what the page shows
      else
        out.append(text.substr(i, step.len));
      i += step.len;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
      case '\n':
      case '\r':
        out.push_back(static_cast<char>(c));
        break;
      default:
        if (c >= 0x20 && c != 0x7F) out.push_back(static_cast<char>(c));
    }
    ++i;
  }
  return out;
}

std::string outside_link(std::string_view url) {
  const bool web = url.starts_with("https://") || url.starts_with("http://");
  const bool plain = std::none_of(url.begin(), url.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u >= 0x7f;  // and nothing beyond ASCII: no bidi control, no look-alike
  });
  if (!web || !plain || url.size() > 2048) return esc(url);
  return "<a href=\"" + esc(url) + "\" rel=\"noreferrer noopener\">" + esc(url) + "</a>";
}

std::string href(std::string_view path, std::string_view token, std::string_view query) {
  std::string out(path);
  out += "?token=" + url_encode(token);
  if (!query.empty()) out.append("&").append(query);
  return esc(out);
}

std::string format_duration(std::int64_t ms) {
  if (ms < 1000) return std::to_string(ms < 0 ? 0 : ms) + "ms";
  char buf[32];
  std::int64_t s = ms / 1000;
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%" PRId64 "h%02" PRId64 "m", s / 3600, (s / 60) % 60);
  return buf;
}

std::string status_badge(std::string_view status) {
  std::string cls;
  for (char c : status)
    cls.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '-');
  return "<span class=\"status s-" + esc(cls) + "\">" + esc(status) + "</span>";
}

std::string page(const PageFrame& f, std::string_view body) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<meta name=\"referrer\" content=\"same-origin\">";
  out += "<meta name=\"loopr-token\" content=\"" + esc(f.token) + "\">";
  // The tab says what waits for the person and where: "plan 001 at the gate · Gate · repo".
  out += "<title>" + (f.waits.empty() ? std::string() : esc(f.waits) + " · ") + esc(f.title) +
         " · " + esc(f.repo) + " · loopr</title>";
  out += "<link rel=\"icon\" type=\"image/svg+xml\" href=\"" + href("/static/icon.svg", f.token) +
         "\">";
  out += "<link rel=\"stylesheet\" href=\"" + href("/static/style.css", f.token) + "\">";
  out += "<script defer src=\"" + href("/static/app.js", f.token) + "\"></script>";
  out += "</head><body";
  if (f.since >= 0) out += " data-since=\"" + std::to_string(f.since) + "\"";
  out += "><header><a class=\"brand\" href=\"" + href("/", f.token) + "\">loopr</a>";
  out += "<span class=\"repo\">" + esc(f.repo) + "</span><nav>";
  auto item = [&](const char* name, const char* path, const std::string& label) {
    out += "<a href=\"" + href(path, f.token) + "\"";
    if (f.nav == name) out += " class=\"current\"";
    out += ">" + label + "</a>";
  };
  item("tree", "/", "Tree");
  std::string gate = "Gate";
  if (f.waiting > 0) gate += " <span class=\"count\">" + std::to_string(f.waiting) + "</span>";
  item("gate", "/gate", gate);
  out += "</nav>";
  if (f.since >= 0) out += "<span id=\"live\" class=\"live\" title=\"live updates\">live</span>";
  out += "</header><main>";
  out.append(body);
  out += "</main></body></html>\n";
  return out;
}

}  // namespace loopr::web
