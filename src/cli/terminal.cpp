#include "cli/terminal.hpp"

#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "cli/context.hpp"

namespace loopr::cli {

std::atomic<bool> g_interrupted{false};

namespace {

// What the signal handlers and atexit must undo. Plain globals: a handler may read them.
struct termios g_saved_termios;
volatile sig_atomic_t g_raw_fd = -1;
volatile sig_atomic_t g_cursor_hidden = 0;

void restore_terminal_now() {
  if (g_raw_fd >= 0) tcsetattr(g_raw_fd, TCSAFLUSH, &g_saved_termios);
  if (g_cursor_hidden) {
    static const char show[] = "\x1b[?25h";
    ssize_t ignored = write(STDOUT_FILENO, show, sizeof show - 1);
    (void)ignored;
  }
}

void on_interrupt(int) {
  restore_terminal_now();
  g_raw_fd = -1;
  g_cursor_hidden = 0;
  g_interrupted.store(true);
}

void at_exit_restore() { restore_terminal_now(); }

void register_at_exit() {
  static bool done = [] {
    std::atexit(at_exit_restore);
    return true;
  }();
  (void)done;
}

}  // namespace

std::string Style::wrap(std::string_view code, std::string_view text) const {
  if (!color || text.empty()) return std::string(text);
  std::string out = "\x1b[";
  out += code;
  out += 'm';
  out += text;
  out += "\x1b[0m";
  return out;
}

std::string Style::status(LoopStatus s) const {
  const std::string name = to_string(s);
  switch (s) {
    case LoopStatus::running:
    case LoopStatus::rebasing:
      return cyan(name);
    case LoopStatus::complete:
      return green(name);
    case LoopStatus::failed:
      return red(name);
    case LoopStatus::blocked:
      return wrap("1;31", name);
    case LoopStatus::awaiting_approval:
    case LoopStatus::awaiting_answer:
      return wrap("1;35", name);
    case LoopStatus::paused:
    case LoopStatus::stopped:
      return yellow(name);
    case LoopStatus::pending:
    case LoopStatus::invalidated:
      return dim(name);
  }
  return name;
}

std::string Style::status_named(std::string_view name) const {
  auto s = parse_loop_status(name);
  return s ? status(*s) : std::string(name);
}

std::string Style::verdict(TreeVerdict v) const {
  const std::string name = to_string(v);
  switch (v) {
    case TreeVerdict::running:
    case TreeVerdict::merging:
    case TreeVerdict::validating:
      return cyan(name);
    case TreeVerdict::complete:
    case TreeVerdict::merged:
      return green(name);
    case TreeVerdict::failed:
    case TreeVerdict::merge_failed:
    case TreeVerdict::integration_failed:
      return red(name);
  }
  return name;
}

bool is_terminal(int fd) { return isatty(fd) == 1; }

bool stdout_color(const GlobalOptions& opts) {
  if (opts.json) return false;
  if (std::getenv("NO_COLOR") != nullptr) return false;
  return is_terminal(STDOUT_FILENO);
}

int terminal_width(int fallback) {
  struct winsize ws {};
  if (is_terminal(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  return fallback;
}

namespace {

// Length of the escape sequence starting at text[i] (text[i] == ESC), at least 1.
std::size_t escape_length(std::string_view text, std::size_t i) {
  std::size_t j = i + 1;
  if (j < text.size() && text[j] == '[') {
    ++j;
    while (j < text.size() && !(text[j] >= 0x40 && text[j] <= 0x7e)) ++j;
    if (j < text.size()) ++j;
  }
  return j - i;
}

}  // namespace

std::size_t visible_width(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\x1b') {
      i += escape_length(text, i);
      continue;
    }
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++width;
    ++i;
  }
  return width;
}

std::string truncate_visible(std::string_view text, std::size_t width) {
  if (visible_width(text) <= width) return std::string(text);
  std::string out;
  std::size_t used = 0;
  bool styled = false;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\x1b') {
      std::size_t n = escape_length(text, i);
      out.append(text.substr(i, n));
      styled = true;
      i += n;
      continue;
    }
    bool starts_char = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_char) {
      if (used == width) break;
      ++used;
    }
    out += text[i++];
  }
  if (styled) out += "\x1b[0m";
  return out;
}

std::string pad_visible(std::string_view text, std::size_t width) {
  std::string out(text);
  std::size_t w = visible_width(text);
  if (w < width) out.append(width - w, ' ');
  return out;
}

void install_interrupt_handlers() {
  static bool installed = [] {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocking read returns EINTR and the command sees the flag
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    return true;
  }();
  (void)installed;
}

RawMode::RawMode(int fd) : fd_(fd) {
  if (!is_terminal(fd) || g_raw_fd >= 0) return;
  struct termios t;
  if (tcgetattr(fd, &t) != 0) return;
  register_at_exit();
  g_saved_termios = t;
  // Single bytes, no echo; ISIG stays on so Ctrl-C still raises SIGINT (handled above).
  t.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
  t.c_cc[VMIN] = 1;
  t.c_cc[VTIME] = 0;
  if (tcsetattr(fd, TCSAFLUSH, &t) != 0) return;
  g_raw_fd = fd;
  active_ = true;
}

RawMode::~RawMode() {
  if (!active_) return;
  if (g_raw_fd == fd_) tcsetattr(fd_, TCSADRAIN, &g_saved_termios);  // keeps what was typed ahead
  g_raw_fd = -1;
}

HiddenCursor::HiddenCursor() {
  if (!is_terminal(STDOUT_FILENO)) return;
  register_at_exit();
  static const char hide[] = "\x1b[?25l";
  ssize_t ignored = write(STDOUT_FILENO, hide, sizeof hide - 1);
  (void)ignored;
  g_cursor_hidden = 1;
  active_ = true;
}

HiddenCursor::~HiddenCursor() {
  if (!active_ || !g_cursor_hidden) return;
  static const char show[] = "\x1b[?25h";
  ssize_t ignored = write(STDOUT_FILENO, show, sizeof show - 1);
  (void)ignored;
  g_cursor_hidden = 0;
}

}  // namespace loopr::cli
