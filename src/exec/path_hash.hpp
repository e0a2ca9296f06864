// A short stable name for a path (the low 32 bits of its FNV-1a 64 hash, in hex): the worktree
// root's folder per repository and the Slurm job token per repository. Stored on disk and in
// job names, so it never changes.
#pragma once

#include <string>

#include <loopr/core/stable_hash.hpp>

namespace loopr::exec {

inline std::string path_hash(const std::string& text) {
  std::string hex = stable_hash_hex(stable_hash(text), 8);
  // std::hex wrote no leading zeros: the names already on disk have none.
  auto first = hex.find_first_not_of('0');
  return first == std::string::npos ? "0" : hex.substr(first);
}

}  // namespace loopr::exec
