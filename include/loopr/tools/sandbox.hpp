// The sandbox every tool path goes through: a path must resolve inside the loop's worktree.
// `..` that leaves it, absolute paths, NUL bytes, `.git`, and symlinks (or chains of symlinked
// folders) that point out are refused with a message the model can act on.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <loopr/core/result.hpp>

namespace loopr::tools {

class Sandbox {
 public:
  /// `root` must exist; it is canonicalised once.
  explicit Sandbox(const std::filesystem::path& root);

  const std::filesystem::path& root() const { return root_; }

  /// Resolves a model-given path to an absolute path inside the root. The target need not
  /// exist (for writes), but every existing part of it is resolved through symlinks.
  Result<std::filesystem::path> resolve(std::string_view path) const;

  /// The root-relative form of a resolved path (for messages).
  std::string relative(const std::filesystem::path& resolved) const;

 private:
  std::filesystem::path root_;
};

}  // namespace loopr::tools
