// The smallest artifacts that pass loopr's format checks, for tests whose scripted model (or
// scripted CLI) writes a whole one-leaf tree: a plan with one spec, a spec with one phase, the
// phase. The code loop writes `code/<loop id>.txt`.
#pragma once

namespace loopr::testing {

inline constexpr const char* kTreePlan =
    "# Plan\n\n## Overview\nWrite a file.\n\n## Phases\n1. Write it.\n\n## Success Criteria\n- "
    "check.sh passes.\n\n## Specs to Create\n- spec-files: Write the file.\n";
inline constexpr const char* kTreeSpec =
    "# Spec\n\n## Parent Plan\nThe plan.\n\n## Overview\nA file.\n\n## Phases\n1. **Part one**\n"
    "   Write it.\n   - Files: code/x.txt\n";
inline constexpr const char* kTreePhase =
    "# Phase\n\n## Parent Spec\nThe spec.\n\n## Task\nWrite the file.\n\n## Specific Work\n- "
    "Write it.\n\n## Success Criteria\n- check.sh passes.\n";

}  // namespace loopr::testing
