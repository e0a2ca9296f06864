#include "daemon/response_decoder.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace loopr::daemon {

namespace {

Error bad(std::string what) {
  return make_error(ErrorCode::io, "bad HTTP answer from the daemon: " + std::move(what));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// True if the last transfer coding of a Transfer-Encoding value is `chunked`.
bool ends_with_chunked(std::string_view value) {
  auto comma = value.rfind(',');
  auto last = trim(comma == std::string_view::npos ? value : value.substr(comma + 1));
  return lower(last) == "chunked";
}

}  // namespace

std::optional<std::string> ResponseHead::field(std::string_view lower_name) const {
  for (const auto& [name, value] : fields)
    if (name == lower_name) return value;
  return std::nullopt;
}

Result<void> ResponseDecoder::parse_head(std::string_view text) {
  head_ = ResponseHead{};
  auto eol = text.find("\r\n");
  auto status_line = text.substr(0, eol);
  // "HTTP/1.1 200 OK"
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ')
    return bad("status line '" + std::string(status_line.substr(0, 64)) + "'");
  auto code = status_line.substr(9, 3);
  auto [end, ec] = std::from_chars(code.data(), code.data() + code.size(), head_.status);
  if (ec != std::errc{} || end != code.data() + code.size() || head_.status < 100)
    return bad("status code '" + std::string(code) + "'");

  std::string_view rest = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 2);
  while (!rest.empty()) {
    auto line_end = rest.find("\r\n");
    auto line = rest.substr(0, line_end);
    rest = line_end == std::string_view::npos ? std::string_view{} : rest.substr(line_end + 2);
    auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return bad("header line '" + std::string(line.substr(0, 64)) + "'");
    head_.fields.emplace_back(lower(line.substr(0, colon)),
                              std::string(trim(line.substr(colon + 1))));
  }

  if (head_.status < 200) {  // 1xx: an interim answer; the real one follows
    stage_ = Stage::head;
    return ok();
  }
  if (head_.status == 204 || head_.status == 304) {
    stage_ = Stage::done;
    return ok();
  }
  if (auto te = head_.field("transfer-encoding"); te && ends_with_chunked(*te)) {
    stage_ = Stage::chunk_size;
    return ok();
  }
  if (auto length = head_.field("content-length")) {
    std::uint64_t n = 0;
    auto [p, e] = std::from_chars(length->data(), length->data() + length->size(), n);
    if (e != std::errc{} || p != length->data() + length->size())
      return bad("Content-Length '" + *length + "'");
    remaining_ = n;
    stage_ = n == 0 ? Stage::done : Stage::fixed;
    return ok();
  }
  stage_ = Stage::until_close;
  return ok();
}

void ResponseDecoder::body_bytes(std::size_t& pos) {
  auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, pending_.size() - pos));
  if (n > 0) on_body_(std::string_view(pending_).substr(pos, n));
  pos += n;
  remaining_ -= n;
}

bool ResponseDecoder::read_head(std::size_t& pos, Result<void>& result) {
  std::string_view view(pending_);
  auto end = view.find("\r\n\r\n", pos);
  if (end == std::string_view::npos) {
    if (view.size() - pos > max_head_bytes_) result = bad("the header is too long");
    return false;
  }
  result = parse_head(view.substr(pos, end - pos));
  pos = end + 4;
  return true;
}

bool ResponseDecoder::read_chunk_size(std::size_t& pos, Result<void>& result) {
  std::string_view view(pending_);
  auto end = view.find("\r\n", pos);
  if (end == std::string_view::npos) {
    if (view.size() - pos > 1024) result = bad("a chunk size line is too long");
    return false;
  }
  auto line = view.substr(pos, end - pos);
  line = trim(line.substr(0, line.find(';')));  // chunk extensions are ignored
  std::uint64_t size = 0;
  auto [p, e] = std::from_chars(line.data(), line.data() + line.size(), size, 16);
  if (line.empty() || e != std::errc{} || p != line.data() + line.size()) {
    result = bad("chunk size '" + std::string(line.substr(0, 32)) + "'");
    return false;
  }
  pos = end + 2;
  remaining_ = size;
  stage_ = size == 0 ? Stage::trailer : Stage::chunk_data;
  return true;
}

bool ResponseDecoder::read_chunk_end(std::size_t& pos, Result<void>& result) {
  std::string_view view(pending_);
  if (view.size() - pos < 2) return false;
  if (view.substr(pos, 2) != "\r\n") {
    result = bad("a chunk does not end with CRLF");
    return false;
  }
  pos += 2;
  stage_ = Stage::chunk_size;
  return true;
}

bool ResponseDecoder::read_trailer(std::size_t& pos, Result<void>& result) {
  std::string_view view(pending_);
  auto end = view.find("\r\n", pos);
  if (end == std::string_view::npos) {
    if (view.size() - pos > max_head_bytes_) result = bad("the trailer is too long");
    return false;
  }
  if (end == pos) stage_ = Stage::done;  // the blank line after the last chunk
  pos = end + 2;
  return true;
}

bool ResponseDecoder::step(std::size_t& pos, Result<void>& result) {
  std::string_view view(pending_);
  switch (stage_) {
    case Stage::head:
      return read_head(pos, result);
    case Stage::fixed:
      body_bytes(pos);
      if (remaining_ != 0) return false;
      stage_ = Stage::done;
      return true;
    case Stage::chunk_size:
      return read_chunk_size(pos, result);
    case Stage::chunk_data:
      body_bytes(pos);
      if (remaining_ != 0) return false;
      stage_ = Stage::chunk_end;
      return true;
    case Stage::chunk_end:
      return read_chunk_end(pos, result);
    case Stage::trailer:
      return read_trailer(pos, result);
    case Stage::until_close:
      if (pos < view.size()) on_body_(view.substr(pos));
      pos = view.size();
      return false;
    case Stage::done:
      pos = view.size();
      return false;
  }
  return false;
}

Result<void> ResponseDecoder::feed(std::string_view bytes) {
  if (stage_ == Stage::done) return ok();
  pending_.append(bytes);
  std::size_t pos = 0;
  Result<void> result;
  while (result.ok() && step(pos, result)) {
  }
  pending_.erase(0, std::min(pos, pending_.size()));
  if (stage_ == Stage::done) pending_.clear();
  return result;
}

Result<void> ResponseDecoder::eof() {
  if (stage_ == Stage::until_close) stage_ = Stage::done;
  if (stage_ == Stage::done) return ok();
  if (stage_ == Stage::head && pending_.empty() && head_.status == 0)
    return make_error(ErrorCode::io, "the daemon closed the connection without answering");
  return make_error(ErrorCode::io, "the daemon closed the connection in the middle of its answer");
}

}  // namespace loopr::daemon
