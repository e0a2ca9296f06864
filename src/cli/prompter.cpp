#include "cli/prompter.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <ostream>

#include "cli/context.hpp"
#include "cli/terminal.hpp"

namespace loopr::cli {

namespace {

[[noreturn]] void interrupted() {
  throw CommandError{kInterrupted, "interrupted", "nothing was decided; run the command again"};
}

}  // namespace

Prompter::Prompter(int in_fd, std::ostream& out)
    : fd_(in_fd), out_(out), tty_(is_terminal(in_fd)) {}

std::optional<char> Prompter::next_byte() {
  if (!pending_.empty()) {
    char c = pending_.front();
    pending_.erase(0, 1);
    return c;
  }
  if (eof_ && !tty_) return std::nullopt;
  char buf[4096];
  while (true) {
    if (g_interrupted.load()) interrupted();
    ssize_t n = ::read(fd_, buf, tty_ ? 1 : sizeof buf);
    if (n > 0) {
      pending_.assign(buf + 1, static_cast<std::size_t>(n - 1));
      return buf[0];
    }
    if (n == 0) {
      eof_ = true;  // a terminal's Ctrl-D: the next read may bring more
      return std::nullopt;
    }
    if (errno == EINTR) {
      if (g_interrupted.load()) interrupted();
      continue;
    }
    eof_ = true;
    return std::nullopt;
  }
}

std::optional<std::string> Prompter::next_line() {
  std::string line;
  bool any = false;
  while (auto c = next_byte()) {
    any = true;
    if (*c == '\n') return line;
    if (*c != '\r') line += *c;
  }
  if (!any) return std::nullopt;
  return line;  // the last line had no '\n'
}

std::optional<char> Prompter::choose(std::string_view prompt, std::string_view keys) {
  if (tty_) {
    RawMode raw(fd_);  // before the prompt is shown: keys typed earlier are dropped, not taken
    out_ << prompt << std::flush;
    while (true) {
      auto c = next_byte();
      if (!c || *c == '\x04') {
        out_ << "\n" << std::flush;
        return std::nullopt;
      }
      char k = static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
      if (keys.find(k) != std::string_view::npos) {
        out_ << k << "\n" << std::flush;
        return k;
      }
    }
  }
  while (true) {
    out_ << prompt << std::flush;
    auto line = next_line();
    if (!line) {
      out_ << "\n" << std::flush;
      return std::nullopt;
    }
    std::size_t i = line->find_first_not_of(" \t");
    if (i == std::string::npos) continue;
    char k = static_cast<char>(std::tolower(static_cast<unsigned char>((*line)[i])));
    if (keys.find(k) != std::string_view::npos) {
      out_ << k << "\n" << std::flush;  // echo, so a transcript of a scripted review reads well
      return k;
    }
    out_ << "\nplease answer with one of: ";
    for (std::size_t j = 0; j < keys.size(); ++j) out_ << (j ? ", " : "") << keys[j];
    out_ << "\n";
  }
}

std::optional<std::string> Prompter::read_line(std::string_view prompt) {
  out_ << prompt << std::flush;
  auto line = next_line();
  if (!tty_) out_ << "\n" << std::flush;
  return line;
}

std::string Prompter::read_text(std::string_view prompt) {
  out_ << prompt << std::flush;
  std::string text;
  while (auto line = next_line()) {
    if (line->find_first_not_of(" \t") == std::string::npos) break;
    if (!text.empty()) text += '\n';
    text += *line;
  }
  if (!tty_) out_ << "\n" << std::flush;
  return text;
}

}  // namespace loopr::cli
