// The merge boundary (docs/security.md B3): what a loop's work or a tree may bring into the
// integration branch and the base branch, decided over the COMMITTED tree diff (git objects,
// never the worktree: what a checkout of the result would write). A pure function over the
// changed entries; src/git reads them, the engine and the manager act on the answer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/protected_paths.hpp>

namespace loopr {

struct Config;

/// The rules a diff is checked against.
struct MergeRules {
  std::vector<std::string> harness;  ///< protect.harness (held at the tree level)
  std::vector<std::string> hold;     ///< protect.hold (held at the tree level)
  std::vector<std::string> tests;    ///< protect.tests: existing tests (held at the tree level)
  /// The repository's hook folder (`core.hooksPath`, repository-relative, when it is inside the
  /// repository); `.githooks/` and `.husky/` are always hook folders.
  std::string hooks_path;
  /// The approved plan's text: an existing test it names may change (a phase's `- Files:` is
  /// the model's word, not the person's).
  std::string approved_plan;
  std::uint64_t max_file_size = 50ULL << 20;
  std::uint64_t max_tree_size = 500ULL << 20;
  /// false: only what is refused outright (a loop's work entering the integration branch);
  /// true: what a person must look at too (a tree entering the base branch).
  bool tree = true;
};

/// Why a path cannot be merged as it is (`detail` empty), or the reason it is refused:
/// a symlink whose target is absolute or leaves the repository, a path with a control character
/// or bytes that are not UTF-8, a file or a tree past its size limit. Held: loopr's own files
/// (`.loopr/` config and prompts and the folders above them, loopr's lines of `.gitignore`
/// removed), the harness, the hook folders, other symlinks, existing tests the plan does not
/// name, protect.hold. One entry per path, the strongest reason first.
std::vector<HeldPath> merge_policy(const std::vector<PathChange>& changes, const MergeRules& rules);

/// The rules of a config: its harness, protect.tests, protect.hold and size limits (no plan).
MergeRules merge_rules(const Config& config);

/// Whether any of `held` is refused outright.
bool any_refused(const std::vector<HeldPath>& held);

/// Why `path` cannot be a file name loopr merges (a control character, not UTF-8); "" when it
/// can.
std::string bad_name(std::string_view path);

/// Where a symlink at `path` with `target` points, repository-relative and normalised; "" when
/// it is absolute or leaves the repository.
std::string link_destination(std::string_view path, std::string_view target);

}  // namespace loopr
