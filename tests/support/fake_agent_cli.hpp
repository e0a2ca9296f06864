// The fixture of the tests of the providers that run an agent's CLI (claude-code, codex,
// gemini) with fake CLIs the test writes: each fake first records what loopr gave it (its
// arguments, working folder and environment) into the test's folder, then does what the test
// says; the request is a code loop's, run in a worktree of its own.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sstream>
#include <string>
#include <vector>

#include "llm/mock_llm_process.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace loopr::llm::testing {

class FakeAgentCliTest : public ::testing::Test {
 protected:
  explicit FakeAgentCliTest(const std::string& dir_prefix) : dir(dir_prefix) {}

  loopr::testing::TempDir dir;
  loopr::testing::TempDir worktree{"loopr-worktree"};

  /// Writes `script` as the executable `name` in `dir`; its path.
  std::string write_executable(const std::string& name, const std::string& script) const {
    auto path = dir / name;
    loopr::testing::write_file(path, script);
    ::chmod(path.c_str(), 0755);
    return path.string();
  }

  /// The fake CLI `name`: records its argv (one a line) in `argv`, its working folder in `cwd`
  /// and its environment in `env`, all in `dir`, then runs `body`. Its path.
  std::string write_fake_cli(const std::string& name, const std::string& body) const {
    std::string d = loopr::testing::shell_quote(dir.str());
    return write_executable(name, "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " +
                                      d + "/argv\npwd > " + d + "/cwd\nenv > " + d + "/env\n" +
                                      body);
  }

  /// The lines of `file` in `dir` (what a fake recorded).
  std::vector<std::string> lines(const std::string& file) const {
    std::vector<std::string> out;
    std::istringstream in(loopr::testing::read_file(dir / file));
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }

  /// Code loop code-001-001-001's request saying `prompt` under `system`, run in `worktree`.
  Request code_request(const std::string& prompt, const std::string& system) const {
    Request r = user_request(prompt, "code-001-001-001", "code");
    r.system = system;
    r.working_dir = worktree.str();
    return r;
  }
};

}  // namespace loopr::llm::testing
