// Server-sent events (WHATWG "event stream" parsing) fed in arbitrary chunks: events are not
// aligned to HTTP chunks or reads, so bytes are buffered until a blank line ends an event. The
// one parser of both streams loopr reads: a provider's (llm) and the daemon's `GET /v1/events`
// (the CLI's client). CR, LF and CRLF end a line; comments and events without data are skipped.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace loopr {

struct SseEvent {
  std::string event;  ///< the `event:` field; empty means "message"
  std::string data;   ///< the `data:` lines joined with '\n'
  std::string id;
};

class SseParser {
 public:
  using Handler = std::function<void(const SseEvent&)>;
  explicit SseParser(Handler on_event) : on_event_(std::move(on_event)) {}

  /// Feeds the next bytes; complete events go to the handler.
  void feed(std::string_view bytes);
  /// Bytes that have not yet formed a complete event (a stream cut mid-event leaves some).
  bool has_partial_event() const;

 private:
  void line(std::string_view l);

  Handler on_event_;
  std::string buffer_;       ///< bytes of the line being received
  bool pending_cr_ = false;  ///< the last byte was '\r': a following '\n' belongs to it
  SseEvent current_;
  bool has_data_ = false;
  bool has_fields_ = false;
};

}  // namespace loopr
