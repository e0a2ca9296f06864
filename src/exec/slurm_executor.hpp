// The Slurm executor: every command of a loop as a job step on a cluster node (srun), inside
// the same bubblewrap sandbox as locally (see slurm_step.hpp for how one step runs).
#pragma once

#include <memory>

#include <loopr/exec/executor.hpp>

namespace loopr::exec {

std::unique_ptr<Executor> make_slurm_executor(const SandboxConfig& sandbox,
                                              ExecutorOptions options);

}  // namespace loopr::exec
