// The CLI's last line of defence for the person's terminal: every byte written to stdout and
// stderr passes a filter that lets through only loopr's own styling (the SGR colours and
// weights `Style` uses) and shows everything else that a terminal would act on visibly
// (core/text.hpp `terminal_text`): other escape sequences (a clipboard write `ESC]52`, a screen
// clear, a title, concealed text), C0 and C1 controls, invalid UTF-8. Renderers already pass the
// model's text through `terminal_text`; this filter makes a missed spot harmless (at worst text
// in one of loopr's colours). The live views' cursor movement goes around it
// (`write_terminal_control`). Under `--json` stdout only has to be valid UTF-8: JSON escapes the
// controls itself, and nothing else is changed there.
#pragma once

#include <memory>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace loopr::cli {

/// A stream buffer that filters what is written through it into `target` (see the file comment).
class TerminalFilterBuf : public std::streambuf {
 public:
  /// `utf8_only`: only invalid UTF-8 is replaced (for a JSON document on stdout).
  TerminalFilterBuf(std::streambuf* target, bool utf8_only);
  ~TerminalFilterBuf() override;

  /// Writes `bytes` to the target as they are (after what was written before): loopr's own
  /// cursor control.
  void write_raw(std::string_view bytes);

  /// Writes out a cut-off sequence held back for the next write (as U+FFFD or visibly).
  void finish();

  std::streambuf* target() const { return target_; }

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void filter(std::string_view bytes);
  void finish_locked();

  std::streambuf* target_;
  bool utf8_only_;
  std::mutex mutex_;     ///< std::cout may be written from more than one thread
  std::string pending_;  ///< an unfinished UTF-8 or escape sequence at the end of the last write
};

/// Installs the filter on std::cout and std::cerr for its lifetime (restored and flushed after).
class TerminalGuard {
 public:
  explicit TerminalGuard(bool json);
  ~TerminalGuard();
  TerminalGuard(const TerminalGuard&) = delete;
  TerminalGuard& operator=(const TerminalGuard&) = delete;

 private:
  std::unique_ptr<TerminalFilterBuf> out_, err_;
};

/// Flushes `os` and writes `control` (cursor movement, line clearing) to it unfiltered: the only
/// way escape sequences other than `Style`'s reach the terminal.
void write_terminal_control(std::ostream& os, std::string_view control);

/// True when `sequence` (starting with ESC) is one of loopr's own SGR styles.
bool is_own_style(std::string_view sequence);

}  // namespace loopr::cli
