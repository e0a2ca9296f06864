
#include <cstdio>

#include <loopr/api/answers.hpp>
#include <loopr/daemon/http.hpp>
#include <loopr/daemon/http_common.hpp>

namespace loopr::daemon {

Response error_response(int status, std::string message) {
  Response r;
  r.status = status;
  r.body = api::to_json(api::ErrorView{std::move(message)});
  return r;
}

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Calls `line` for each line of `text` (CR, LF or CRLF ends a line); an empty text is one
/// empty line, and a trailing line break does not add an empty last line.
template <typename Fn>
void for_each_line(std::string_view text, Fn line) {
  if (text.empty()) {
    line(text);
    return;
  }
  while (!text.empty()) {
    auto end = text.find_first_of("\r\n");
    if (end == std::string_view::npos) {
      line(text);
      return;
    }
    line(text.substr(0, end));
    std::size_t skip =
        (text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n') ? 2 : 1;
    text.remove_prefix(end + skip);
  }
}

/// An `id:` or `event:` value must stay on one line.
std::string one_line(std::string_view value) {
  std::string out(value);
  for (auto& c : out)
    if (c == '\r' || c == '\n') c = ' ';
  return out;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      int hi = hex_value(text[i + 1]);
      int lo = hex_value(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<std::map<std::string, std::string>> parse_form(std::string_view text) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    auto amp = text.find('&');
    auto pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view{} : text.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    auto key = percent_decode(pair.substr(0, eq), true);
    auto value = percent_decode(
        eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1), true);
    if (!key || !value) return std::nullopt;
    out.insert_or_assign(std::move(*key), std::move(*value));
  }
  return out;
}

Result<Target> parse_target(std::string_view target) {
  if (target.empty() || target.front() != '/')
    return make_error(ErrorCode::invalid_argument,
                      "the request target must be a path starting with '/'");
  auto question = target.find('?');
  auto raw_path = target.substr(0, question);
  // A fragment never reaches a server, but ignore one rather than fold it into the path.
  if (auto hash = raw_path.find('#'); hash != std::string_view::npos)
    raw_path = raw_path.substr(0, hash);
  Target out;
  auto path = percent_decode(raw_path, false);
  if (!path) return make_error(ErrorCode::invalid_argument, "bad %-escape in the request path");
  if (path->find('\0') != std::string::npos)
    return make_error(ErrorCode::invalid_argument, "NUL byte in the request path");
  out.path = std::move(*path);
  if (question == std::string_view::npos) return out;

  auto query = target.substr(question + 1);
  if (auto hash = query.find('#'); hash != std::string_view::npos) query = query.substr(0, hash);
  auto fields = parse_form(query);
  if (!fields) return make_error(ErrorCode::invalid_argument, "bad %-escape in the query string");
  out.query = std::move(*fields);
  return out;
}

std::vector<std::string> path_segments(std::string_view path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) out.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

std::optional<std::map<std::string, std::string>> match_path(
    const std::vector<std::string>& pattern, const std::vector<std::string>& parts) {
  if (pattern.size() != parts.size()) return std::nullopt;
  std::map<std::string, std::string> params;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const std::string& w = pattern[i];
    if (w.size() > 2 && w.front() == '{' && w.back() == '}')
      params[w.substr(1, w.size() - 2)] = parts[i];
    else if (w != parts[i])
      return std::nullopt;
  }
  return params;
}

std::string format_sse_message(std::string_view id, std::string_view event, std::string_view data) {
  std::string out;
  out.reserve(data.size() + id.size() + event.size() + 32);
  if (!id.empty()) out.append("id: ").append(one_line(id)).append("\n");
  if (!event.empty()) out.append("event: ").append(one_line(event)).append("\n");
  for_each_line(data, [&](std::string_view l) { out.append("data: ").append(l).append("\n"); });
  out.append("\n");
  return out;
}

std::string format_sse_comment(std::string_view text) {
  std::string out;
  for_each_line(text, [&](std::string_view l) { out.append(": ").append(l).append("\n"); });
  out.append("\n");
  return out;
}

std::string format_chunk(std::string_view data) {
  if (data.empty()) return {};
  char size[32];
  int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out;
  out.reserve(static_cast<std::size_t>(n) + data.size() + 2);
  out.append(size, static_cast<std::size_t>(n)).append(data).append("\r\n");
  return out;
}

}  // namespace loopr::daemon
