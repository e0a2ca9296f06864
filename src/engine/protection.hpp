// A code loop's changes against the protection rule (core/protected_paths.hpp): read from its
// worktree before the tests run, so a weakened harness never decides an iteration.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/core/protected_paths.hpp>
#include <loopr/core/result.hpp>
#include <loopr/git/clean_changes.hpp>

#include "engine/validation.hpp"

namespace loopr::engine {

/// Whether a loop's changes are checked: code loops (the integration fix loop too: it has no
/// phase, so it owns nothing).
bool checks_protection(const Loop& loop);

/// The files `- Files:` of the loop's phase document lists (none for a fix loop or a document
/// that does not parse).
std::vector<std::string> phase_files(const Loop& loop, const std::string& input);

/// The breaches of the loop's whole work (its commits and uncommitted edits since it started;
/// blocking: call on the pool). `written`: only loopr's file tools wrote the worktree since the
/// last checkpoint (git::Worktree::path_changes_since may then read no more than those paths).
Result<std::vector<Breach>> protection_breaches(const Loop& loop, const Config& config,
                                                const std::string& input,
                                                const git::WrittenSince* written = nullptr);

/// The protection rule and the merge policy's refusals (core/merge_policy.hpp) again, on exactly
/// what the checkpoint `sha` committed (git objects, since the loop's work started): what the
/// tests themselves changed while they ran is caught here. A failed check when anything is
/// found (naming each file), nullopt when nothing is. Blocking: call on the pool.
Result<std::optional<Validation>> committed_check(const Loop& loop, const Config& config,
                                                  const std::string& input,
                                                  const std::filesystem::path& root,
                                                  const std::string& sha,
                                                  std::vector<Breach>& breaches);

/// The failed check an iteration with breaches gets instead of running the tests: the summary
/// and the feedback name each file (validation.log holds the same text).
Validation breach_validation(const Loop& loop, const Config& config,
                             const std::vector<Breach>& breaches);

}  // namespace loopr::engine
