// The smallest artifacts that pass loopr's format checks, for tests whose scripted model (or
// scripted CLI) writes a whole one-leaf tree: a plan with one spec, a spec with one phase, the
// phase. The code loop writes `code/<loop id>.txt`.
#pragma once

#include <string>

namespace loopr::testing {

/// `text` with each line that is not empty indented by `n` spaces: an artifact as a YAML block
/// scalar (`content: |`) in a mock-llm script.
inline std::string indent(const std::string& text, int n) {
  std::string pad(static_cast<std::size_t>(n), ' '), out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    out += line.empty() ? "\n" : pad + line + "\n";
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

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
