// One command as a Slurm job step: the srun line, the small shell script that runs bubblewrap
// on the node, and how its output is read back. Pure functions, unit-tested without a cluster.
//
// The step script prints a line before and after the sandboxed command: the first says the job
// started (with its id), the last whether bubblewrap started the command, its exit code and
// whether the node's `timeout` ended it. What the command printed is between them. With no
// first line the job never ran (the cluster's failure, retried); with no last line it was lost
// while it ran (node failure, preemption): neither is ever the command's own failure.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>

namespace loopr::exec {

/// What srun needs for one command.
struct StepRequest {
  std::string job_name;
  std::string runner_class;
  std::chrono::milliseconds timeout{0};  ///< the command's own (0: executor.slurm.time_limit)
  std::uint64_t open_files = 0;          ///< ulimit -n on the node (0: unchanged)
  std::vector<std::string> command;      ///< what the script runs: `bwrap ARGS -- argv`
};

/// The full srun argv (srun at [0]).
std::vector<std::string> srun_argv(const SlurmConfig& config, const std::string& srun,
                                   const StepRequest& request);

/// The marker lines, as the script prints them.
inline constexpr const char* kStartedMarker = "@@loopr-slurm started ";
inline constexpr const char* kFinishedMarker = "@@loopr-slurm finished ";

struct StepReport {
  std::optional<std::string> job_id;  ///< set when the start line was seen
  bool finished = false;              ///< the end line was seen
  bool sandbox_started = false;       ///< bubblewrap started the command
  int exit_code = -1;
  bool timed_out = false;  ///< the node's `timeout` ended it
  std::string output;      ///< the command's output, marker lines taken out
};

/// Reads the markers out of a step's (capped) output.
StepReport read_step_output(const std::string& output);

/// True for a marker line (on_line hides them from a command's live output).
bool is_marker_line(std::string_view line);

/// The job id in a start line, or nullopt.
std::optional<std::string> started_job(std::string_view line);

}  // namespace loopr::exec
