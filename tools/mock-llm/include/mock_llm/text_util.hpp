// Small string helpers for mock-llm: UTF-8-safe cutting (streamed pieces must each be valid
// UTF-8 JSON strings), a deterministic random source for ids and fault draws, header lookup.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loopr::mock_llm {

/// Splits `text` into pieces of `min_piece`..`max_piece` bytes (lengths drawn from `seed`),
/// never inside a UTF-8 sequence; concatenating the pieces gives `text` back.
std::vector<std::string> split_utf8(std::string_view text, std::size_t min_piece,
                                    std::size_t max_piece, std::uint64_t seed);

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a UTF-8 boundary.
std::string utf8_prefix(std::string_view text, std::size_t max_bytes);

std::string to_lower(std::string_view text);

/// splitmix64: the same seed gives the same ids and fault draws on every platform (the
/// standard distributions are implementation-defined, so they are not used).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  /// Uniform in [0, 1).
  double unit();
  /// `n` characters of [0-9A-Za-z], as in `msg_01…` ids.
  std::string base62(std::size_t n);
  /// Base64 of `bytes` random bytes, as in thinking signatures.
  std::string base64(std::size_t bytes);

 private:
  std::uint64_t state_;
};

/// HTTP headers of one request, names lower-cased, in arrival order.
struct Headers {
  std::vector<std::pair<std::string, std::string>> items;

  /// The first value of header `name` (lower-case), if present.
  std::optional<std::string_view> get(std::string_view name) const;
};

}  // namespace loopr::mock_llm
