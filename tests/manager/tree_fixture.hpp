// Loop records for the tree rules' tests: built in memory, no store, git or process.
#pragma once

#include <string>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/core/loop.hpp>

namespace loopr::manager::test {

/// A loop of `plan`'s tree with the type and parent its id implies.
inline Loop loop(const std::string& id, LoopStatus status = LoopStatus::pending,
                 int iteration = 1) {
  Loop l;
  l.id = id;
  l.type = *type_of_id(id);
  l.parent_id = parent_of_id(id).value_or("");
  l.plan_id = root_plan_id(id);
  l.status = status;
  l.iteration = iteration;
  l.max_iterations = 5;
  l.version = 3;
  if (l.type != LoopType::code) l.output_artifacts = {".loopr/x/" + id + ".md"};
  return l;
}

/// Complete and owed nothing: merged into the integration branch, children spawned.
inline Loop finished(const std::string& id, int iteration = 1) {
  Loop l = loop(id, LoopStatus::complete, iteration);
  l.tree.merged_iteration = iteration;
  l.tree.merged_sha = std::string(40, 'a');
  if (l.type != LoopType::code) l.tree.spawned_iteration = iteration;
  return l;
}

/// plan 001 → spec 001-001 → phase 001-001-001 → code-001-001-001, every loop finished.
inline std::vector<Loop> finished_tree() {
  return {finished("001"), finished("001-001"), finished("001-001-001"),
          finished("code-001-001-001")};
}

inline Loop& find(std::vector<Loop>& tree, const std::string& id) {
  for (Loop& l : tree)
    if (l.id == id) return l;
  throw std::runtime_error("no loop " + id + " in the test tree");
}

inline const char* const kPlanText = R"(# Add a --shout flag

## Overview
Make greet louder.

## Phases
1. Parse the flag.

## Success Criteria
- It shouts.

## Specs to Create
- spec-shout-flag: Parse `--shout`.
- spec-shout-tests: Test the flag.
)";

inline const char* const kSpecText = R"(# Spec: shout flag

## Parent Plan
.loopr/plans/001-add-a-shout-flag.plan.md

## Overview
The flag.

## Phases
1. **Parse**
   Read the argument.
   - Files: greet.sh, lib/args.sh
2. **Upper-case**
   Shout it.
)";

inline const char* const kPhaseText = R"(# Phase: parse the flag

## Parent Spec
.loopr/specs/001-001-shout-flag.spec.md

## Task
Parse it.

## Specific Work
- Edit greet.sh.

## Success Criteria
- greet --shout works.
)";

}  // namespace loopr::manager::test
