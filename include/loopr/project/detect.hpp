// The project's test command, found from what the repository has (docs/guide.md "Using it on your
// project"): `loopr init` writes it, `doctor` and the daemon's baseline check use the same
// knowledge (the project module sits below the CLI and the manager).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>

namespace loopr::project {

struct TestCommandCandidate {
  std::string command;  ///< the shell command, run in a loop's worktree
  std::string source;   ///< where it came from: `package.json scripts.test, with pnpm-lock.yaml`
  /// Folders (`build/`) the command writes into that git must ignore, else a code loop's
  /// checkpoint would commit the build output.
  std::vector<std::string> build_dirs;
};

/// Every test command the repository at `root` suggests, in the documented order (first is
/// best): package.json `scripts.test` (npm, pnpm, yarn or bun by lockfile), Cargo.toml, go.mod,
/// Python (pytest configured in pytest.ini/pyproject.toml/setup.cfg/tox.ini, else tox and then
/// tox.ini's `[testenv] commands` run without it, else
/// pytest for a pyproject.toml/setup.cfg/setup.py project), CMakeLists.txt, a Makefile with a
/// `test` (or `check`) target, meson.build, build.gradle(.kts), pom.xml, mix.exs, Gemfile +
/// Rakefile, and test scripts (tests/run.sh, test.sh, run_tests.sh, script/test, …).
std::vector<TestCommandCandidate> detect_test_commands(const std::filesystem::path& root);

/// Why `command` cannot run on this machine: the first of its programs that is neither on the
/// PATH of `env` nor (a path) in `root`. Empty when every one is found.
std::string not_runnable(const std::string& command, const std::filesystem::path& root,
                         const EnvLookup& env);

/// The person's own CMake cache: build/CMakeCache.txt, else the most recently configured of
/// cmake-build-*/, _build/, build-*/ and out/build/*/ (empty: none).
std::filesystem::path user_cmake_cache(const std::filesystem::path& root);

/// ` -DNAME=VALUE …`: the entries of the person's own CMake cache (user_cmake_cache) that differ
/// from the project's defaults (`option()` and `set(… CACHE STRING|PATH|FILEPATH …)` in
/// CMakeLists.txt and cmake/*.cmake; a value shell-quoted when it needs it), and its
/// CMAKE_BUILD_TYPE; empty without such a cache.
std::string cmake_cache_options(const std::filesystem::path& root);

}  // namespace loopr::project
