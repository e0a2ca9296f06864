// FNV-1a 64: a hash that is the same in every run and every build, for names that are stored
// (a worktree root's folder, a Slurm job token, a baseline's meta key), cache keys and
// fingerprints. Not for security: anyone can make two texts with the same hash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace loopr {

inline constexpr std::uint64_t kStableHashStart = 1469598103934665603ULL;

/// `text` fed into `h`: chain calls to hash several parts.
constexpr std::uint64_t stable_hash(std::string_view text, std::uint64_t h = kStableHashStart) {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  return h;
}

/// `h` in `digits` lowercase hex digits (the low ones; leading zeros kept).
inline std::string stable_hash_hex(std::uint64_t h, int digits = 16) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = kHex[h & 0xf];
  return out;
}

}  // namespace loopr
