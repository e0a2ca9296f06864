// Branch names loopr uses, for the git module and its callers: the names are made in
// core/branch_names.hpp (plain strings), and are the same functions here.
#pragma once

#include <loopr/core/branch_names.hpp>

namespace loopr::git {

using loopr::archive_branch;
using loopr::integration_branch;
using loopr::loop_branch;

}  // namespace loopr::git
