#include <algorithm>
#include <cctype>
#include <mock_llm/text_util.hpp>

namespace loopr::mock_llm {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

/// Moves `pos` back to the start of the UTF-8 sequence it falls into.
std::size_t boundary_at_or_before(std::string_view text, std::size_t pos) {
  while (pos > 0 && pos < text.size() && is_continuation(static_cast<unsigned char>(text[pos])))
    --pos;
  return pos;
}

}  // namespace

std::vector<std::string> split_utf8(std::string_view text, std::size_t min_piece,
                                    std::size_t max_piece, std::uint64_t seed) {
  std::vector<std::string> pieces;
  Rng rng(seed);
  min_piece = std::max<std::size_t>(min_piece, 1);
  max_piece = std::max(max_piece, min_piece);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t len = min_piece + rng.next() % (max_piece - min_piece + 1);
    std::size_t end = std::min(text.size(), pos + len);
    std::size_t cut = boundary_at_or_before(text, end);
    if (cut <= pos) {
      // A single sequence longer than the piece: take it whole.
      cut = pos + 1;
      while (cut < text.size() && is_continuation(static_cast<unsigned char>(text[cut]))) ++cut;
    }
    pieces.emplace_back(text.substr(pos, cut - pos));
    pos = cut;
  }
  return pieces;
}

std::string utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  return std::string(text.substr(0, boundary_at_or_before(text, max_bytes)));
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double Rng::unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::string Rng::base62(std::size_t n) {
  static constexpr std::string_view kAlphabet =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out += kAlphabet[next() % kAlphabet.size()];
  return out;
}

std::string Rng::base64(std::size_t bytes) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string raw;
  raw.reserve(bytes);
  for (std::size_t i = 0; i < bytes; ++i) raw += static_cast<char>(next() & 0xFF);
  std::string out;
  for (std::size_t i = 0; i < raw.size(); i += 3) {
    std::uint32_t v = static_cast<unsigned char>(raw[i]) << 16;
    if (i + 1 < raw.size()) v |= static_cast<unsigned char>(raw[i + 1]) << 8;
    if (i + 2 < raw.size()) v |= static_cast<unsigned char>(raw[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < raw.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < raw.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

std::optional<std::string_view> Headers::get(std::string_view name) const {
  for (const auto& [k, v] : items)
    if (k == name) return std::string_view(v);
  return std::nullopt;
}

}  // namespace loopr::mock_llm
