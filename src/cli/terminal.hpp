// The terminal: colour only on a terminal and never with NO_COLOR, visible widths of text with
// escape codes, and raw single-key input that is always undone (exit, Ctrl-C, SIGTERM).
#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include <loopr/core/loop.hpp>
#include <loopr/core/tree_verdict.hpp>

namespace loopr::cli {

struct GlobalOptions;

/// ANSI styling that turns itself off: every function returns `text` unchanged when `color` is
/// false, so callers never branch on it.
struct Style {
  bool color = false;

  std::string bold(std::string_view text) const { return wrap("1", text); }
  std::string dim(std::string_view text) const { return wrap("2", text); }
  std::string italic(std::string_view text) const { return wrap("3", text); }
  std::string underline(std::string_view text) const { return wrap("4", text); }
  std::string red(std::string_view text) const { return wrap("31", text); }
  std::string green(std::string_view text) const { return wrap("32", text); }
  std::string yellow(std::string_view text) const { return wrap("33", text); }
  std::string blue(std::string_view text) const { return wrap("34", text); }
  std::string magenta(std::string_view text) const { return wrap("35", text); }
  std::string cyan(std::string_view text) const { return wrap("36", text); }
  /// The status's name in the colour that `loopr list` gives it.
  std::string status(LoopStatus status) const;
  /// `name` coloured as its status when it names one (counts keyed by status), else as it is.
  std::string status_named(std::string_view name) const;
  /// A tree verdict's name, coloured like the status it resembles.
  std::string verdict(TreeVerdict verdict) const;

  std::string wrap(std::string_view code, std::string_view text) const;
};

/// True when fd is a terminal.
bool is_terminal(int fd);

/// Colour for stdout: a terminal, no `--json`, and NO_COLOR not set (https://no-color.org).
bool stdout_color(const GlobalOptions& opts);

/// Columns of the terminal on stdout, or `fallback` when it is not a terminal.
int terminal_width(int fallback = 100);

/// Columns `text` takes on screen: escape sequences take none, a UTF-8 character one.
std::size_t visible_width(std::string_view text);

/// `text` cut to `width` visible columns (escape sequences kept, a reset appended if cut).
std::string truncate_visible(std::string_view text, std::size_t width);

/// `text` padded with spaces to `width` visible columns (never cut).
std::string pad_visible(std::string_view text, std::size_t width);

/// Set once SIGINT or SIGTERM arrived (after `install_interrupt_handlers`).
extern std::atomic<bool> g_interrupted;

/// SIGINT/SIGTERM set `g_interrupted` and undo raw mode and a hidden cursor at once (the
/// handler does only async-signal-safe work); the command then ends normally. Idempotent.
void install_interrupt_handlers();

/// Raw mode on a terminal fd (no echo, no line buffering, bytes as typed) for its lifetime.
/// Restored by the destructor, at exit, and by the interrupt handlers. A no-op off a terminal.
class RawMode {
 public:
  explicit RawMode(int fd);
  ~RawMode();
  RawMode(const RawMode&) = delete;
  RawMode& operator=(const RawMode&) = delete;
  bool active() const { return active_; }

 private:
  int fd_;
  bool active_ = false;
};

/// Hides the cursor on a terminal stdout for its lifetime (shown again on exit and Ctrl-C).
class HiddenCursor {
 public:
  HiddenCursor();
  ~HiddenCursor();
  HiddenCursor(const HiddenCursor&) = delete;
  HiddenCursor& operator=(const HiddenCursor&) = delete;

 private:
  bool active_ = false;
};

}  // namespace loopr::cli
