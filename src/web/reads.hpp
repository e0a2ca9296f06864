// What the web UI's pages read from the repository and the transcripts, off the io thread (each
// a blocking call for the reads pool): artifacts, a loop's diff, a file as a loop's branch has it,
// an iteration's files. Everything read is model-written: it is shown, never interpreted.
#pragma once

#include <string>

#include <loopr/api/views.hpp>
#include <loopr/core/repo_paths.hpp>

#include "web/pages.hpp"

namespace loopr::web {

/// An artifact, at most 1 MiB made valid UTF-8, through the one reader (git/artifact.hpp): from
/// the loop's worktree while it has one (a regular file there, never through a symlink, never a
/// FIFO), else as committed on its branch, archived, or on its plan's integration branch.
ShownFile read_artifact(const RepoPaths& paths, const api::LoopRow& loop, const std::string& rel);

/// `rel` as committed on the loop's branches (the ones its diff is made from; a plan's
/// integration branch first). Committed only: a symlink is shown as the path it holds.
ShownFile read_committed(const RepoPaths& paths, const api::LoopRow& loop, const std::string& rel);

/// A loop's diff: its `label` (`git diff FROM...BRANCH`) and text. `base`: the base branch.
struct LoopDiff {
  std::string label;
  ShownFile diff;
};
LoopDiff read_loop_diff(const RepoPaths& paths, const api::LoopRow& loop, const std::string& base);

/// Iteration `n`'s files (core/iteration_files.hpp), each up to a page's worth.
IterationFiles read_iteration(const RepoPaths& paths, const std::string& id, int n);

}  // namespace loopr::web
