// Reading at most a limit from a stream without allocating the limit up front.
#pragma once

#include <algorithm>
#include <array>
#include <istream>
#include <string>

namespace loopr {

/// Up to `max_bytes + 1` bytes of `in` (one more than the limit tells the caller the input is
/// too big), read in 64 KiB chunks: the string grows with what is there, so a few-KB file read
/// under a 1 MiB limit holds a few KB (issue 18: a string of the whole limit per read was ~1 MiB
/// per running loop in the daemon's peak RSS).
inline std::string read_up_to(std::istream& in, std::size_t max_bytes) {
  const std::size_t limit = max_bytes == std::string::npos ? max_bytes : max_bytes + 1;
  std::string out;
  std::array<char, 64 * 1024> chunk;
  while (out.size() < limit && in) {
    std::size_t want = std::min(chunk.size(), limit - out.size());
    in.read(chunk.data(), static_cast<std::streamsize>(want));
    if (in.gcount() <= 0) break;
    out.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  return out;
}

}  // namespace loopr
