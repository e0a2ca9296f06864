// The pure parts of the control API's HTTP transport, shared by the server and its tests:
// request-target decoding, and the bytes of SSE messages and HTTP/1.1 chunks.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/result.hpp>

namespace loopr::daemon {

/// Decodes `%XX` escapes (and `+` as a space when `plus_is_space`, as in query strings).
/// nullopt for a `%` not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);

/// `application/x-www-form-urlencoded` fields, as in a query string or a form's body (a repeated
/// name keeps its last value; empty pairs skipped); nullopt for a bad `%` escape.
std::optional<std::map<std::string, std::string>> parse_form(std::string_view text);

/// A request target split into its decoded path and query parameters.
struct Target {
  std::string path;
  std::map<std::string, std::string> query;  ///< a repeated key keeps its last value
};

/// Parses an origin-form target (`/v1/loops/001?all=true`). ErrorCode::invalid_argument for a
/// target that does not start with '/', a bad escape, or a NUL byte in the path.
Result<Target> parse_target(std::string_view target);

/// A path's non-empty segments: "/v1/loops/001/approve" is {"v1","loops","001","approve"}.
std::vector<std::string> path_segments(std::string_view path);

/// A route's path (`/v1/loops/{id}`, split by path_segments) against a request's segments: the
/// values of its `{name}`s, or nullopt when it is another path. The control API's routes and the
/// web UI's pages match with it.
std::optional<std::map<std::string, std::string>> match_path(
    const std::vector<std::string>& pattern, const std::vector<std::string>& parts);

/// The paths of a table of routes (rows with a `path`: the control API's kRoutes, the web UI's
/// kPages), each split by path_segments once, in the table's order, for match_path.
template <typename Table>
std::vector<std::vector<std::string>> path_patterns(const Table& rows) {
  std::vector<std::vector<std::string>> out;
  for (const auto& row : rows) out.push_back(path_segments(row.path));
  return out;
}

/// One SSE message: `id:` and `event:` lines (left out when empty; line breaks in them become
/// spaces), one `data:` line per line of `data` (CR, LF and CRLF all break lines), a blank line.
std::string format_sse_message(std::string_view id, std::string_view event, std::string_view data);

/// An SSE comment (`: text`), one per line of `text`, then a blank line.
std::string format_sse_comment(std::string_view text);

/// `data` framed as one HTTP/1.1 chunk (`<hex size>\r\n<data>\r\n`); empty data gives "".
std::string format_chunk(std::string_view data);

/// The chunk that ends a chunked body.
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

}  // namespace loopr::daemon
