// Server-sent events as the CLI reads them from `GET /v1/events`: bytes in any cut, messages
// out. (The same rules as llm::SseParser; a copy of ~60 lines keeps the CLI's client free of
// the llm module.)
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <loopr/daemon/http.hpp>

namespace loopr::daemon {

class SseDecoder {
 public:
  using Handler = std::function<void(const SseMessage&)>;
  explicit SseDecoder(Handler on_message) : on_message_(std::move(on_message)) {}

  /// Feeds the next bytes; each complete message (ended by a blank line) goes to the handler.
  /// CR, LF and CRLF all end a line; comments (`: ping`) and messages without data are skipped.
  void feed(std::string_view bytes);

 private:
  void line(std::string_view l);

  Handler on_message_;
  std::string line_;         ///< the line being received
  bool pending_cr_ = false;  ///< the last byte was '\r': a '\n' right after belongs to it
  SseMessage current_;
  bool has_data_ = false;
};

}  // namespace loopr::daemon
