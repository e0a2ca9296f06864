#include <loopr/core/sse.hpp>

namespace loopr {

void SseParser::feed(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    if (pending_cr_) {
      pending_cr_ = false;
      if (bytes[i] == '\n') {  // the "\r\n" pair was split between two feeds
        ++i;
        continue;
      }
    }
    auto end = bytes.find_first_of("\r\n", i);
    if (end == std::string_view::npos) {
      buffer_.append(bytes.substr(i));
      return;
    }
    buffer_.append(bytes.substr(i, end - i));
    line(buffer_);
    buffer_.clear();
    if (bytes[end] == '\r') {
      if (end + 1 < bytes.size()) {
        i = bytes[end + 1] == '\n' ? end + 2 : end + 1;
      } else {
        pending_cr_ = true;
        i = end + 1;
      }
    } else {
      i = end + 1;
    }
  }
}

bool SseParser::has_partial_event() const { return !buffer_.empty() || has_fields_; }

void SseParser::line(std::string_view l) {
  if (l.empty()) {  // a blank line dispatches the event (if it had data, as the spec says)
    if (has_data_) on_event_(current_);
    current_ = SseEvent{};
    has_data_ = false;
    has_fields_ = false;
    return;
  }
  if (l.front() == ':') return;  // a comment (keep-alive)
  auto colon = l.find(':');
  std::string_view field = l.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  has_fields_ = true;
  if (field == "event") {
    current_.event = value;
  } else if (field == "data") {
    if (has_data_) current_.data += '\n';
    current_.data.append(value);
    has_data_ = true;
  } else if (field == "id") {
    current_.id = value;
  }  // `retry` and unknown fields: nothing loopr needs
}

}  // namespace loopr
