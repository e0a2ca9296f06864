// A loop's files as the control API serves them (`GET /v1/loops/{id}/artifact|file|diff|
// iterations/{n}`, src/daemon/API.md) and the web page shows them: artifacts, a file as a loop's
// branch has it, a loop's diff, an iteration's files. Each is a blocking call for the reads pool.
// Everything read is model-written: it is shown, never interpreted.
#pragma once

#include <string>

#include <loopr/api/files.hpp>
#include <loopr/api/views.hpp>
#include <loopr/core/iteration_files.hpp>
#include <loopr/core/repo_paths.hpp>

namespace loopr::daemon {

/// An artifact, at most 1 MiB made valid UTF-8, through the one reader (git/artifact.hpp): from
/// the loop's worktree while it has one (a regular file there, never through a symlink, never a
/// FIFO), else as committed on its branch, archived, or on its plan's integration branch.
api::FileView read_artifact(const RepoPaths& paths, const api::LoopRow& loop,
                            const std::string& rel);

/// `rel` as committed on the loop's branches (the ones its diff is made from; a plan's
/// integration branch first). Committed only: a symlink is shown as the path it holds.
api::FileView read_committed(const RepoPaths& paths, const api::LoopRow& loop,
                             const std::string& rel);

/// A loop's diff: its `label` (`git diff FROM...BRANCH`) and text. `base`: the base branch.
api::DiffView read_loop_diff(const RepoPaths& paths, const api::LoopRow& loop,
                             const std::string& base);

/// Iteration `n`'s files (core/iteration_files.hpp), each up to `max_bytes` (a page's worth
/// unless said).
IterationRead read_iteration(const RepoPaths& paths, const std::string& id, int n,
                             std::size_t max_bytes = kIterationFilePageBytes);
/// The same, as the API answers it.
api::IterationView iteration_view(const IterationRead& read);

}  // namespace loopr::daemon
