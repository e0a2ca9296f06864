// A short stable name for a path (the low 32 bits of its FNV-1a 64 hash, in hex): the worktree
// root's folder per repository and the Slurm job token per repository. Stored on disk and in
// job names, so it never changes.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

namespace loopr::exec {

inline std::string path_hash(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  std::ostringstream out;
  out << std::hex << (h & 0xffffffffULL);
  return out.str();
}

}  // namespace loopr::exec
