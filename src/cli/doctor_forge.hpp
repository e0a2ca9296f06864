// `loopr doctor` under `merge: pr`: the remote, the token's variable, the forge's API (online).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>

#include "cli/doctor_status.hpp"

namespace loopr::cli {

struct ForgeCheck {
  std::string name;
  CheckStatus status = CheckStatus::ok;
  std::string message;
  std::string hint;
};

/// Nothing unless `merge: pr`. `offline`: the API is not asked.
std::vector<ForgeCheck> check_forge(const std::filesystem::path& root, const Config& config,
                                    bool offline);

}  // namespace loopr::cli
