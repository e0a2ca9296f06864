#include "git/text.hpp"

namespace loopr::git::detail {

namespace {

bool needs_quote(unsigned char c, bool quote_non_ascii) {
  // A space too: porcelain output is split on spaces by scripts, so git quotes it there.
  return c < 0x20 || c == 0x7f || c == '"' || c == '\\' || c == ' ' ||
         (c >= 0x80 && quote_non_ascii);
}

}  // namespace

std::string quote_path(std::string_view path, bool quote_non_ascii) {
  bool plain = true;
  for (unsigned char c : path) plain = plain && !needs_quote(c, quote_non_ascii);
  if (plain) return std::string(path);
  std::string out = "\"";
  for (unsigned char c : path) {
    switch (c) {
      case '\a':
        out += "\\a";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\v':
        out += "\\v";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && quote_non_ascii)) {
      out += '\\';
      out += static_cast<char>('0' + ((c >> 6) & 7));
      out += static_cast<char>('0' + ((c >> 3) & 7));
      out += static_cast<char>('0' + (c & 7));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

void LineCapper::add(std::string_view text) {
  while (!text.empty()) {
    auto nl = text.find('\n');
    if (nl == std::string_view::npos) {
      pending_.append(text);
      return;
    }
    if (pending_.empty()) {
      take_line(text.substr(0, nl + 1));
    } else {
      pending_.append(text.substr(0, nl + 1));
      take_line(pending_);
      pending_.clear();
    }
    text.remove_prefix(nl + 1);
  }
}

void LineCapper::take_line(std::string_view line) {
  if (!cutting_ && kept_lines_ < max_lines_ && out_.size() + line.size() <= max_bytes_) {
    out_.append(line);
    ++kept_lines_;
    return;
  }
  // Once one line is cut, later (shorter) lines are cut too: the text stays a prefix.
  cutting_ = true;
  ++cut_lines_;
}

std::string LineCapper::finish() {
  if (!pending_.empty()) {
    std::string last = std::move(pending_);
    pending_.clear();
    last += '\n';
    take_line(last);
  }
  if (cut_lines_ > 0) {
    // Always "lines", even for one: callers and tests match the marker literally.
    out_ += "… " + std::to_string(cut_lines_) + " more lines\n";
  }
  return std::move(out_);
}

}  // namespace loopr::git::detail
