// An incremental HTTP/1.1 response parser for the blocking control-API client (no Asio in the
// CLI): feed it bytes as they arrive, in any cut; the body comes out decoded (Content-Length,
// chunked, or until the server closes).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <loopr/core/result.hpp>

namespace loopr::daemon {

struct ResponseHead {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> fields;  ///< names lower-cased

  /// The value of the first field named `lower_name`.
  std::optional<std::string> field(std::string_view lower_name) const;
};

class ResponseDecoder {
 public:
  using BodySink = std::function<void(std::string_view)>;
  explicit ResponseDecoder(BodySink on_body, std::size_t max_head_bytes = 64 * 1024)
      : on_body_(std::move(on_body)), max_head_bytes_(max_head_bytes) {}

  /// Feeds the next bytes; body bytes go to the sink. ErrorCode::io for a malformed response.
  /// Bytes after the end of the response are ignored.
  Result<void> feed(std::string_view bytes);
  /// The server closed the connection: ends a body delimited by the close. ErrorCode::io if
  /// the response was cut short.
  Result<void> eof();

  bool head_done() const { return stage_ != Stage::head; }
  bool done() const { return stage_ == Stage::done; }
  const ResponseHead& head() const { return head_; }

 private:
  enum class Stage { head, fixed, chunk_size, chunk_data, chunk_end, trailer, until_close, done };

  Result<void> parse_head(std::string_view text);
  /// Passes up to `remaining_` bytes from `pending_` at `pos` to the sink.
  void body_bytes(std::size_t& pos);
  // One step of `feed` in the current stage, from `pos` in `pending_`: whether it moved on
  // (consumed bytes or changed stage); an error goes to `result`.
  bool step(std::size_t& pos, Result<void>& result);
  bool read_head(std::size_t& pos, Result<void>& result);
  bool read_chunk_size(std::size_t& pos, Result<void>& result);
  bool read_chunk_end(std::size_t& pos, Result<void>& result);
  bool read_trailer(std::size_t& pos, Result<void>& result);

  BodySink on_body_;
  std::size_t max_head_bytes_;
  Stage stage_ = Stage::head;
  ResponseHead head_;
  std::string pending_;          ///< received bytes not consumed yet
  std::uint64_t remaining_ = 0;  ///< bytes left in the body (fixed) or the current chunk
};

}  // namespace loopr::daemon
