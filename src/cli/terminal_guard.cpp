#include "cli/terminal_guard.hpp"

#include <iostream>

#include <loopr/core/text.hpp>

namespace loopr::cli {

namespace {

// An escape sequence is held back at the end of a write only this long (then it is text).
constexpr std::size_t kMaxHeldEscape = 32;

bool is_param_byte(char c) { return c >= 0x30 && c <= 0x3F; }

// Bytes at the end of `text` that may be the start of an escape sequence not finished yet.
std::size_t unfinished_escape(std::string_view text) {
  std::size_t esc = text.rfind('\x1b');
  if (esc == std::string_view::npos || text.size() - esc > kMaxHeldEscape) return 0;
  if (esc + 1 == text.size()) return 1;
  if (text[esc + 1] != '[') return 0;
  for (std::size_t i = esc + 2; i < text.size(); ++i)
    if (!is_param_byte(text[i])) return 0;
  return text.size() - esc;
}

// The escape sequence at text[i] (an ESC): copied when it is one of loopr's styles, else the ESC
// is shown as `^[`. Returns where the text goes on.
std::size_t filter_escape(std::string_view text, std::size_t i, std::string& out) {
  std::size_t j = i + 1;
  if (j < text.size() && text[j] == '[') {
    ++j;
    while (j < text.size() && is_param_byte(text[j])) ++j;
    if (j < text.size() && is_own_style(text.substr(i, j + 1 - i))) {
      out.append(text.substr(i, j + 1 - i));
      return j + 1;
    }
  }
  out += "^[";  // anything else is shown, and what followed the ESC is plain text
  return i + 1;
}

}  // namespace

bool is_own_style(std::string_view seq) {
  if (seq.size() < 4 || seq.substr(0, 2) != "\x1b[" || seq.back() != 'm') return false;
  std::string_view params = seq.substr(2, seq.size() - 3);
  while (true) {
    std::size_t semi = params.find(';');
    std::string_view p = params.substr(0, semi);
    // Style's codes: reset, bold, dim, italic, underline, strike-through, red … cyan.
    bool known = p == "0" || p == "1" || p == "2" || p == "3" || p == "4" || p == "9" ||
                 (p.size() == 2 && p[0] == '3' && p[1] >= '1' && p[1] <= '6');
    if (!known) return false;
    if (semi == std::string_view::npos) return true;
    params.remove_prefix(semi + 1);
  }
}

TerminalFilterBuf::TerminalFilterBuf(std::streambuf* target, bool utf8_only)
    : target_(target), utf8_only_(utf8_only) {}

TerminalFilterBuf::~TerminalFilterBuf() {
  finish();
  target_->pubsync();
}

void TerminalFilterBuf::write_raw(std::string_view bytes) {
  std::lock_guard lock(mutex_);
  finish_locked();
  target_->sputn(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void TerminalFilterBuf::finish() {
  std::lock_guard lock(mutex_);
  finish_locked();
}

void TerminalFilterBuf::finish_locked() {
  if (pending_.empty()) return;
  std::string rest = std::move(pending_);
  pending_.clear();
  std::string out = utf8_only_ ? valid_utf8(rest) : terminal_text(rest);
  target_->sputn(out.data(), static_cast<std::streamsize>(out.size()));
}

TerminalFilterBuf::int_type TerminalFilterBuf::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  char c = traits_type::to_char_type(ch);
  filter(std::string_view(&c, 1));
  return ch;
}

std::streamsize TerminalFilterBuf::xsputn(const char* s, std::streamsize n) {
  filter(std::string_view(s, static_cast<std::size_t>(n)));
  return n;
}

int TerminalFilterBuf::sync() { return target_->pubsync(); }

void TerminalFilterBuf::filter(std::string_view bytes) {
  std::lock_guard lock(mutex_);
  std::string text;
  std::string_view in = bytes;
  if (!pending_.empty()) {
    text = std::move(pending_);
    pending_.clear();
    text.append(bytes);
    in = text;
  }
  // What may still be completed by the next write waits for it.
  std::size_t hold = utf8_unfinished_tail(in);
  if (!utf8_only_) {
    hold = std::max(hold, unfinished_escape(in));
    if (hold == 0 && !in.empty() && in.back() == '\r') hold = 1;  // maybe a CR LF pair
  }
  std::string_view now = in.substr(0, in.size() - hold);
  std::string out;
  if (utf8_only_) {
    out = valid_utf8(now);
  } else {
    out.reserve(now.size());
    std::size_t i = 0;
    while (i < now.size()) {
      std::size_t esc = now.find('\x1b', i);
      std::size_t end = esc == std::string_view::npos ? now.size() : esc;
      out += terminal_text(now.substr(i, end - i));
      if (esc == std::string_view::npos) break;
      i = filter_escape(now, esc, out);
    }
  }
  pending_.assign(in.substr(in.size() - hold));
  target_->sputn(out.data(), static_cast<std::streamsize>(out.size()));
}

TerminalGuard::TerminalGuard(bool json)
    : out_(std::make_unique<TerminalFilterBuf>(std::cout.rdbuf(), json)),
      err_(std::make_unique<TerminalFilterBuf>(std::cerr.rdbuf(), false)) {
  std::cout.flush();
  std::cerr.flush();
  std::cout.rdbuf(out_.get());
  std::cerr.rdbuf(err_.get());
}

TerminalGuard::~TerminalGuard() {
  std::cout.flush();
  std::cerr.flush();
  out_->finish();
  err_->finish();
  std::cout.rdbuf(out_->target());
  std::cerr.rdbuf(err_->target());
  std::cout.flush();
  std::cerr.flush();
}

void write_terminal_control(std::ostream& os, std::string_view control) {
  os.flush();
  if (auto* f = dynamic_cast<TerminalFilterBuf*>(os.rdbuf()))
    f->write_raw(control);
  else
    os << control;
}

}  // namespace loopr::cli
