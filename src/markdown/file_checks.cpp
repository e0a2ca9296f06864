#include "markdown/file_checks.hpp"

#include <cstdio>
#include <string>

namespace loopr::markdown {
namespace {

// Length of the well-formed UTF-8 sequence at `i`, or 0 if the bytes there are not one
// (Unicode 15, table 3-7: the second byte's range depends on the first).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlong forms
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;  // no overlong forms
    if (b0 == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return len;
}

constexpr int kMaxUtf8Problems = 10;

}  // namespace

void check_size(std::string_view text, const ArtifactsConfig& limits, std::vector<Problem>& out) {
  if (text.size() <= limits.max_bytes) return;
  out.push_back({1, Rule::too_large,
                 "the file is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                     std::to_string(limits.max_bytes) +
                     " bytes: shorten it to the essentials and leave the details to the child "
                     "artifacts"});
}

void check_utf8(std::string_view text, std::vector<Problem>& out) {
  int line = 1;
  int last_reported = 0;
  int reported = 0;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      ++line;
      line_start = ++i;
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x80) {  // the common case, without a call
      ++i;
      continue;
    }
    std::size_t len = utf8_sequence_length(text, i);
    if (len > 0) {
      i += len;
      continue;
    }
    if (line != last_reported) {
      last_reported = line;
      if (++reported > kMaxUtf8Problems) {
        out.push_back({line, Rule::not_utf8,
                       "more lines from here on are not valid UTF-8: save the whole file as UTF-8 "
                       "text"});
        return;
      }
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(c));
      out.push_back({line, Rule::not_utf8,
                     std::string("the line is not valid UTF-8 (byte ") + hex + " at column " +
                         std::to_string(i - line_start + 1) +
                         "): write the file as UTF-8 text, replacing or removing that character"});
    }
    ++i;
  }
}

bool is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    std::size_t len = utf8_sequence_length(text, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace loopr::markdown
