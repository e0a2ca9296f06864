#include "daemon/sse_decoder.hpp"

namespace loopr::daemon {

void SseDecoder::feed(std::string_view bytes) {
  std::size_t i = 0;
  if (pending_cr_ && !bytes.empty()) {
    pending_cr_ = false;
    if (bytes.front() == '\n') i = 1;  // the CRLF pair was cut between two reads
  }
  while (i < bytes.size()) {
    auto end = bytes.find_first_of("\r\n", i);
    if (end == std::string_view::npos) {
      line_.append(bytes.substr(i));
      return;
    }
    line_.append(bytes.substr(i, end - i));
    std::string l;
    l.swap(line_);
    i = end + 1;
    if (bytes[end] == '\r') {
      if (i < bytes.size()) {
        if (bytes[i] == '\n') ++i;
      } else {
        pending_cr_ = true;
      }
    }
    line(l);
  }
}

void SseDecoder::line(std::string_view l) {
  if (l.empty()) {  // a blank line ends the message
    if (has_data_) on_message_(current_);
    current_ = SseMessage{};
    has_data_ = false;
    return;
  }
  if (l.front() == ':') return;  // a comment (keep-alive ping)
  auto colon = l.find(':');
  auto field = l.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) current_.data += '\n';
    current_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    current_.event = value;
  } else if (field == "id") {
    current_.id = value;
  }  // `retry` and unknown fields: nothing the CLI needs
}

}  // namespace loopr::daemon
