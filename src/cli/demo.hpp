// `loopr demo [--yes]`: the bundled example run end to end offline — a copy of
// `.loopr-example/project/` in a fresh git repository, `loopr-mock-llm` playing the model from
// `.loopr-example/mock-model.yml`, the daemon, the gate, the live tree, and the merged result.
#pragma once

#include "cli/context.hpp"

namespace loopr::cli {

/// Runs the demo; `yes` approves the plan without asking. Exit 0 when the tree completed and
/// merged, 1 when it ended otherwise, 130 on Ctrl-C. The daemon and the mock server it started
/// are stopped in every case; the demo repository is kept (its path is printed as `repo: PATH`).
int run_demo(const GlobalOptions& opts, bool yes);

}  // namespace loopr::cli
