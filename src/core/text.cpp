#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include <loopr/core/text.hpp>
#include <loopr/core/utf8.hpp>

namespace loopr {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

using Step = Utf8Step;

}  // namespace

Utf8Step utf8_step(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b = byte(i);
  if (b < 0x80) return {b, 1, true};
  std::size_t need;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  char32_t cp;
  if (b >= 0xC2 && b <= 0xDF) {
    need = 1;
    cp = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 2;
    cp = b & 0x0F;
    if (b == 0xE0) lo = 0xA0;  // no overlong forms
    if (b == 0xED) hi = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3;
    cp = b & 0x07;
    if (b == 0xF0) lo = 0x90;  // no overlong forms
    if (b == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return {0, 1, false};
  }
  std::size_t k = 1;
  for (; k <= need; ++k) {
    if (i + k >= text.size()) return {0, k, false};
    unsigned char c = byte(i + k);
    bool ok = k == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    if (!ok) return {0, k, false};
    cp = (cp << 6) | (c & 0x3F);
  }
  return {cp, need + 1, true};
}

bool is_hidden_control(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

std::string code_point_label(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "<U+%04X>", static_cast<unsigned>(cp));
  return buf;
}

namespace {

void append_visible(std::string& out, char32_t cp) {
  if (cp < 0x20) {
    out += '^';
    out += static_cast<char>(cp + 0x40);  // ^@ ^A … ^[ … ^_
  } else if (cp == 0x7F) {
    out += "^?";
  } else {
    out += code_point_label(cp);
  }
}

template <typename Fn>
nlohmann::json map_strings(const nlohmann::json& value, const Fn& fn) {
  switch (value.type()) {
    case nlohmann::json::value_t::string:
      return fn(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& v : value) out.push_back(map_strings(v, fn));
      return out;
    }
    case nlohmann::json::value_t::object: {
      nlohmann::json out = nlohmann::json::object();
      for (auto it = value.begin(); it != value.end(); ++it)
        out[fn(it.key())] = map_strings(it.value(), fn);
      return out;
    }
    default:
      return value;
  }
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    Step s = utf8_step(text, i);
    if (!s.valid) return false;
    i += s.len;
  }
  return true;
}

std::string valid_utf8(std::string_view text) {
  if (is_valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size();) {
    Step s = utf8_step(text, i);
    if (s.valid)
      out.append(text.substr(i, s.len));
    else
      out += kReplacement;
    i += s.len;
  }
  return out;
}

std::size_t utf8_unfinished_tail(std::string_view text) {
  // The last byte that is not a continuation byte, among the last four.
  std::size_t stop = text.size() > 4 ? text.size() - 4 : 0;
  for (std::size_t i = text.size(); i > stop; --i) {
    unsigned char b = static_cast<unsigned char>(text[i - 1]);
    if ((b & 0xC0) == 0x80) continue;
    Step s = utf8_step(text, i - 1);
    // Ill-formed only because the text ends: the rest may come.
    return !s.valid && i - 1 + s.len >= text.size() && b >= 0xC2 && b <= 0xF4
               ? text.size() - (i - 1)
               : 0;
  }
  return 0;
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Back up over continuation bytes to the start of the sequence the cut falls into.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

namespace {

std::string visible_text(std::string_view text, std::size_t max_bytes, bool one_line) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  for (std::size_t i = 0; i < text.size();) {
    std::size_t before = out.size();
    Step s = utf8_step(text, i);
    if (!s.valid) {
      out += kReplacement;
    } else if (!one_line && s.cp == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      // CR LF: a line end (Windows line ends are not an attack).
    } else if (!one_line && (s.cp == '\n' || s.cp == '\t')) {
      out += static_cast<char>(s.cp);
    } else if (s.cp < 0x20 || s.cp == 0x7F || is_hidden_control(s.cp)) {
      append_visible(out, s.cp);
    } else {
      out.append(text.substr(i, s.len));
    }
    i += s.len;
    if (out.size() > max_bytes) {
      // The last character (or its visible form) does not fit whole: it is left out.
      out.resize(before);
      out += "…";
      return out;
    }
  }
  return out;
}

}  // namespace

std::string terminal_text(std::string_view text, std::size_t max_bytes) {
  return visible_text(text, max_bytes, false);
}

std::string name_text(std::string_view text, std::size_t max_bytes) {
  return visible_text(text, max_bytes, true);
}

nlohmann::json terminal_json(const nlohmann::json& value) {
  return map_strings(value, [](const std::string& s) { return terminal_text(s); });
}

nlohmann::json valid_utf8_json(const nlohmann::json& value) {
  return map_strings(value, [](const std::string& s) { return valid_utf8(s); });
}

std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string first_line(const std::string& text, std::size_t max_len) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t'))
      line.pop_back();
    std::size_t lead = line.find_first_not_of(" \t");
    if (lead != std::string::npos) {
      line = line.substr(lead);
      if (line.size() > max_len) {
        std::size_t cut = max_len;
        while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
        line = line.substr(0, cut) + "…";
      }
      return line;
    }
    start = end + 1;
  }
  return {};
}

}  // namespace loopr
