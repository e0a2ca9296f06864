// Questions to the person at the terminal (`loopr review`, the gate of `submit --wait`): a
// single key press on a terminal (raw mode, always restored), the same answers line by line
// when stdin is a pipe or a file, so scripts can drive every prompt.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace loopr::cli {

class Prompter {
 public:
  /// Reads answers from `in_fd`; prompts go to `out` (stderr when stdout is kept for `--json`).
  Prompter(int in_fd, std::ostream& out);

  /// True when answers come from a terminal (single keys, no Enter needed).
  bool interactive() const { return tty_; }

  /// Prints `prompt` and returns one of `keys` (lower-case letters): on a terminal the first
  /// such key pressed; otherwise the first letter of the next non-blank line (answers like
  /// `approve` work too). An unknown answer asks again. nullopt at the end of input (Ctrl-D).
  /// Ctrl-C throws CommandError{kInterrupted}.
  std::optional<char> choose(std::string_view prompt, std::string_view keys);

  /// Prints `prompt` and reads one line (without its '\n'); nullopt at the end of input.
  std::optional<std::string> read_line(std::string_view prompt);

  /// Prints `prompt` and reads lines until an empty line or the end of input (Ctrl-D); the
  /// lines joined with '\n' (empty when the first line was empty).
  std::string read_text(std::string_view prompt);

 private:
  int fd_;
  std::ostream& out_;
  bool tty_;
  std::string pending_;  ///< bytes read but not used yet
  bool eof_ = false;

  /// Next byte from the fd (nullopt at the end of input).
  std::optional<char> next_byte();
  std::optional<std::string> next_line();
};

}  // namespace loopr::cli
