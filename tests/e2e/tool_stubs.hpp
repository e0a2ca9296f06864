// `loopr init` picks only a test command whose programs are installed (issue 41): tests of what
// init DETECTS run it with stand-ins for every tool on the PATH, so that the detection order, not
// this machine's set of installed tools, is what they check.
#pragma once

#include <sys/stat.h>

#include <string>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

/// `PATH=$PATH:<a folder of stand-ins> ` to put before a command: the installed tools come first
/// (a stand-in is a folder the sandbox hides, so init would show it read-only).
inline std::string with_tool_stubs() {
  static TempDir stubs{"loopr-tool-stubs"};
  static const bool made = [] {
    for (const char* tool : {"npm", "pnpm", "yarn", "bun", "cargo", "go", "mix", "pytest", "tox",
                             "meson", "gradle", "mvn", "bundle", "uv", "poetry", "pdm", "cmake",
                             "make", "ctest", "node", "python", "python3"}) {
      write_file(stubs / "bin" / tool, "#!/bin/sh\nexit 0\n");
      ::chmod((stubs / "bin" / tool).c_str(), 0755);
    }
    return true;
  }();
  (void)made;
  return "PATH=\"$PATH\":" + shell_quote((stubs / "bin").string()) + " ";
}

}  // namespace loopr::testing
