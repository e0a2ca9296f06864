// `loopr init` finds the project's test command from what the repository has, so code loops are
// validated by the project's own tests from the first run (README "Using it on your project").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace loopr::cli {

struct TestCommandCandidate {
  std::string command;  ///< the shell command, run in a loop's worktree
  std::string source;   ///< where it came from: `package.json scripts.test, with pnpm-lock.yaml`
  /// Folders (`build/`) the command writes into that git must ignore, else a code loop's
  /// checkpoint would commit the build output.
  std::vector<std::string> build_dirs;
};

/// Every test command the repository at `root` suggests, in the documented order (first is
/// best): package.json `scripts.test` (npm, pnpm, yarn or bun by lockfile), Cargo.toml, go.mod,
/// Python (pytest configured in pytest.ini/pyproject.toml/setup.cfg/tox.ini, else tox, else
/// pytest for a pyproject.toml/setup.cfg/setup.py project), CMakeLists.txt, a Makefile with a
/// `test` (or `check`) target, meson.build, build.gradle(.kts), pom.xml, mix.exs, Gemfile +
/// Rakefile, and test scripts (tests/run.sh, test.sh, run_tests.sh, script/test, …).
std::vector<TestCommandCandidate> detect_test_commands(const std::filesystem::path& root);

}  // namespace loopr::cli
