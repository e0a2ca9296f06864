// What a project's tests leave behind in a fresh worktree (coverage reports, caches, logs): the
// baseline check lists the untracked files its test command wrote, and they are never committed
// from any loop's worktree of the repository (kTestOutputsFile in the common git folder, read as
// ignore rules by the checkpoint's staging, git/stage.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace loopr::git {

/// In the repository's common git folder: one untracked path a line (`coverage/`, `junit.xml`).
inline constexpr const char* kTestOutputsFile = "loopr-test-outputs";

/// The untracked, not ignored paths of `work_tree` (a folder whose files are all untracked as
/// `dir/`), empty folders left out (the executor's mount points), `except` left out too.
std::vector<std::string> untracked_paths(const std::filesystem::path& work_tree,
                                         const std::vector<std::string>& except = {});

/// Adds `paths` to the repository's kTestOutputsFile (kept sorted, each once). Writes nothing
/// when all are there.
void record_test_outputs(const std::filesystem::path& repo_root,
                         const std::vector<std::string>& paths);

/// The paths of the repository's kTestOutputsFile.
std::vector<std::string> recorded_test_outputs(const std::filesystem::path& repo_root);

}  // namespace loopr::git
