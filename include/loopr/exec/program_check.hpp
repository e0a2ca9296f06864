// Whether the test command's programs can be found where they will run: inside the sandbox,
// which hides the user's home (toolchains such as ~/.cargo, ~/.nvm or pyenv live there).
#pragma once

#include <optional>

#include <loopr/core/config.hpp>
#include <loopr/core/preflight.hpp>
#include <loopr/core/repo_paths.hpp>

namespace loopr::exec {

/// Runs `command -v` for the PATH-found programs of `loops.code.validation` in the configured
/// sandbox (a scratch folder under `.loopr/run/`). A program the daemon's PATH has but the
/// sandbox cannot see is a problem whose hint names the `sandbox.read_only` entry that shows
/// it. nullopt when all are visible, with `sandbox: none`, or when the sandbox itself does not
/// work (that is reported on its own).
std::optional<PreflightProblem> check_validation_in_sandbox(const Config& config,
                                                            const RepoPaths& paths,
                                                            const EnvLookup& env);

}  // namespace loopr::exec
