// `loopr doctor`'s tests check: the project's `setup:` and loops.code.validation in a fresh
// worktree of the base branch, in the sandbox, exactly as a code loop (and the daemon's baseline
// check at submit) runs them. A project whose tests cannot run in a worktree (dependencies only
// in the checkout, an editable install pointing at it) fails here, naming the key to change.
#pragma once

#include <filesystem>
#include <string>

#include <loopr/core/config.hpp>

#include "cli/doctor_status.hpp"

namespace loopr::cli {

struct TestsCheck {
  CheckStatus status = CheckStatus::ok;
  std::string message;  ///< one line
  std::string hint;     ///< what to do (fail)
  std::string detail;   ///< the end of the output (fail)
};

TestsCheck check_tests_in_worktree(const std::filesystem::path& root, const Config& config);

}  // namespace loopr::cli
