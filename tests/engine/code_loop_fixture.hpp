// The code loop of the stop-ladder tests (stop_conditions_test.cpp in process,
// stop_conditions_integration_test.cpp over loopback): a project whose `sh check.sh` fails with
// "still failing" and whose `sh ok.sh` passes, run for real in the sandbox or answered so by the
// kit's fake executor.
#pragma once

#include <map>
#include <string>

#include "support/fakes/engine_kit.hpp"
#include "support/fakes/model_scripts.hpp"

namespace loopr::testing {

inline const std::map<std::string, std::string> kProject = {
    {"check.sh", "echo 'still failing'; exit 1\n"}};

/// Loop `code-001-001-001`, stored pending, validated by `validation`.
inline EngineKit& code_setup(EngineKit& h, const std::string& validation, int max_iterations = 5) {
  h.config->loops[LoopType::code].validation = validation;
  h.executor.answer("check.sh", 1, "still failing\n");
  h.executor.answer("ok.sh", 0);
  h.add_loop("code-001-001-001", LoopType::code, "task", max_iterations);
  return h;
}

}  // namespace loopr::testing
