// The loop the iteration rules are tested on (iteration_rules.hpp, without an engine): the one
// code loop of plan 001, running.
#pragma once

#include <loopr/core/loop.hpp>

namespace loopr::testing {

inline Loop running_code_loop(int max_iterations, int iteration = 0) {
  Loop l;
  l.id = "code-001-001-001";
  l.type = LoopType::code;
  l.plan_id = "001";
  l.status = LoopStatus::running;
  l.iteration = iteration;
  l.max_iterations = max_iterations;
  return l;
}

}  // namespace loopr::testing
