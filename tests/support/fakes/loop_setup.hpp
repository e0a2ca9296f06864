// A loop stored pending with its own branch and worktree made from its plan's integration
// branch (made from `main` when missing): what the manager does at spawn, for engine tests.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include <loopr/core/ids.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>
#include <loopr/store/store_writes.hpp>
#include <loopr/store/task_store.hpp>

namespace loopr::testing {

inline Loop add_loop_with_worktree(TaskStore& store, const std::filesystem::path& repo_dir,
                                   const std::string& id, LoopType type, const std::string& task,
                                   int max_iterations) {
  auto repo = git::Repository::open(repo_dir);
  if (!repo) throw std::runtime_error(repo.error().message);
  std::string plan = root_plan_id(id);
  if (!*repo->has_branch(git::integration_branch(plan)))
    repo->create_branch(git::integration_branch(plan), "main").value();
  std::string branch = git::loop_branch(plan, id);
  repo->create_branch(branch, git::integration_branch(plan)).value();
  auto wt = repo->add_worktree(id, branch);
  if (!wt) throw std::runtime_error(wt.error().message);
  Loop l;
  l.id = id;
  l.type = type;
  l.plan_id = plan;
  l.parent_id = parent_of_id(id).value_or("");
  l.task = task;
  l.max_iterations = max_iterations;
  l.worktree = wt->path().string();
  l.branch = branch;
  if (type != LoopType::code) l.output_artifacts = {artifact_path(type, id, task)};
  return create_loop(store, l).value();
}

}  // namespace loopr::testing
