// The commands, one function each; `app.cpp` wires them to CLI11.
#pragma once

#include <set>
#include <string>

#include "cli/context.hpp"

namespace loopr::cli {

int run_init(const GlobalOptions& opts, const std::string& base);
int run_config(const GlobalOptions& opts);
int run_validate(const GlobalOptions& opts, const std::string& kind, const std::string& file);

}  // namespace loopr::cli
