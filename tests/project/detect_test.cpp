// The project module's knowledge, one table row per layout (issue 41 item 5): the test command
// candidates in order, tox.ini's commands, the user's CMake cache options, and whether a
// candidate can run here.
#include <gtest/gtest.h>

#include <loopr/project/detect.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

struct Layout {
  const char* name;
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> commands;  ///< the candidates, in order
};

const Layout kLayouts[] = {
    {"node_npm", {{"package.json", R"({"scripts": {"test": "mocha"}})"}}, {"npm test"}},
    {"node_placeholder",
     {{"package.json", R"({"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}})"}},
     {}},
    {"node_pnpm",
     {{"package.json", R"({"scripts": {"test": "vitest"}})"}, {"pnpm-lock.yaml", ""}},
     {"pnpm test"}},
    {"go", {{"go.mod", "module x\n"}}, {"go test ./..."}},
    {"cargo", {{"Cargo.toml", "[package]\n"}}, {"cargo test"}},
    {"python_pytest_configured",
     {{"pyproject.toml", "[tool.pytest.ini_options]\n"}, {"tox.ini", "[tox]\n"}},
     {"pytest"}},
    {"python_tox_then_its_commands",
     {{"tox.ini", "[tox]\nenvlist = py3\n\n[testenv]\ndeps = pytest\ncommands =\n    pytest "
                  "{posargs} tests\n    - flake8 {toxinidir}/src\n"},
      {"Makefile", "test:\n\tpython -m pytest\n"}},
     {"tox", "pytest tests && flake8 ./src", "make test"}},
    {"python_tox_commands_one_line",
     {{"tox.ini", "[testenv]\ncommands = python -m unittest {posargs:discover}\n"}},
     {"tox", "python -m unittest discover"}},
    {"python_tox_commands_tox_only_substitution",
     {{"tox.ini", "[testenv]\ncommands = pytest --basetemp={envtmpdir}\n"}}, {"tox"}},
    {"python_assumed", {{"setup.py", ""}}, {"pytest"}},
    {"cmake_no_build_folder",
     {{"CMakeLists.txt", "option(WITH_EXTRA \"extra\" OFF)\n"}},
     {"cmake -S . -B build && cmake --build build && ctest --test-dir build --output-on-failure "
      "--no-tests=error"}},
    {"cmake_with_the_users_cache",
     {{"CMakeLists.txt",
       "project(x NONE)\noption(WITH_EXTRA \"extra tests\" OFF)\noption(WITH_DOCS \"docs\" ON)\n"
       "option(SAME \"unchanged\" ON)\n"},
      {"cmake/more.cmake", "option(FROM_MODULE \"in a module\")\n"},
      {"build/CMakeCache.txt",
       "# This is the CMakeCache file.\n//extra tests\nWITH_EXTRA:BOOL=ON\nWITH_DOCS:BOOL=OFF\n"
       "SAME:BOOL=ON\nFROM_MODULE:BOOL=TRUE\nCMAKE_BUILD_TYPE:STRING=Debug\n"
       "NOT_AN_OPTION:STRING=zzz\n"}},
     {"cmake -S . -B build -DWITH_EXTRA=ON -DWITH_DOCS=OFF -DFROM_MODULE=ON "
      "-DCMAKE_BUILD_TYPE=Debug && cmake --build build && ctest --test-dir build "
      "--output-on-failure --no-tests=error"}},
    {"make_check", {{"Makefile", "all:\n\tcc x.c\ncheck: all\n\t./x --test\n"}}, {"make check"}},
    {"make_variable_named_test", {{"Makefile", "test := x\nall:\n\techo\n"}}, {}},
    {"script", {{"tests/run.sh", "#!/bin/bash\necho ok\n"}}, {"bash tests/run.sh"}},
};

class ProjectDetect : public ::testing::TestWithParam<Layout> {};

TEST_P(ProjectDetect, FindsTheCandidatesInOrder) {
  TempDir dir("loopr-project-detect");
  for (const auto& [path, content] : GetParam().files) write_file(dir / path, content);
  std::vector<std::string> got;
  for (const auto& c : project::detect_test_commands(dir.path())) got.push_back(c.command);
  EXPECT_EQ(got, GetParam().commands);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ProjectDetect, ::testing::ValuesIn(kLayouts),
                         [](const auto& info) { return std::string(info.param.name); });

EnvLookup path_only(const std::string& path) {
  return [path](const char* name) -> std::optional<std::string> {
    if (std::string(name) == "PATH") return path;
    return std::nullopt;
  };
}

TEST(ProjectRunnable, AProgramNotOnThePathIsNotRunnableAndSaysWhich) {
  TempDir dir("loopr-project-runnable");
  write_file(dir / "bin/make", "#!/bin/sh\n");
  std::filesystem::permissions(dir / "bin/make", std::filesystem::perms::owner_all);
  auto env = path_only((dir / "bin").string());
  EXPECT_EQ(project::not_runnable("make test", dir.path(), env), "");
  EXPECT_EQ(project::not_runnable("tox", dir.path(), env),
            "`tox` is not installed (not on the PATH)");
  EXPECT_EQ(project::not_runnable("cd x && make test && tox -e py", dir.path(), env),
            "`tox` is not installed (not on the PATH)");
  EXPECT_EQ(project::not_runnable("./gradlew test", dir.path(), env), "`./gradlew` does not exist");
}

TEST(ProjectCmake, StringCacheVariablesThatDifferArePassedQuotedWhenTheyNeedIt) {
  TempDir dir("loopr-project-cmake");
  write_file(dir / "CMakeLists.txt",
             "project(x NONE)\nset(BACKEND \"sqlite\" CACHE STRING \"the store\")\n"
             "set(DATA_DIR /usr/share/x CACHE PATH \"data\")\nset(SAME on CACHE STRING \"s\")\n"
             "option(FAST \"fast\" OFF)\n");
  write_file(dir / "build/CMakeCache.txt",
             "BACKEND:STRING=postgres\nDATA_DIR:PATH=/opt/my data\nSAME:STRING=on\n"
             "FAST:BOOL=ON\nUNDECLARED:STRING=zzz\nCMAKE_BUILD_TYPE:STRING=Release\n");
  EXPECT_EQ(project::cmake_cache_options(dir.path()),
            " -DBACKEND=postgres -DDATA_DIR='/opt/my data' -DFAST=ON -DCMAKE_BUILD_TYPE=Release");
}

TEST(ProjectCmake, AnIdesBuildFolderIsReadWhenThereIsNoBuildFolder) {
  TempDir dir("loopr-project-cmake");
  write_file(dir / "CMakeLists.txt", "option(WITH_GUI \"gui\" OFF)\n");
  write_file(dir / "cmake-build-debug/CMakeCache.txt",
             "WITH_GUI:BOOL=ON\nCMAKE_BUILD_TYPE:STRING=Debug\n");
  EXPECT_EQ(project::user_cmake_cache(dir.path()), dir.path() / "cmake-build-debug/CMakeCache.txt");
  EXPECT_EQ(project::cmake_cache_options(dir.path()), " -DWITH_GUI=ON -DCMAKE_BUILD_TYPE=Debug");
  // build/ wins when it exists.
  write_file(dir / "build/CMakeCache.txt", "WITH_GUI:BOOL=OFF\n");
  EXPECT_EQ(project::cmake_cache_options(dir.path()), "");
}

TEST(ProjectCmake, NoCacheOrNoDifferenceGivesNoOptions) {
  TempDir dir("loopr-project-cmake");
  write_file(dir / "CMakeLists.txt", "option(A \"a\" ON)\n");
  EXPECT_EQ(project::cmake_cache_options(dir.path()), "");
  write_file(dir / "build/CMakeCache.txt", "A:BOOL=ON\nCMAKE_BUILD_TYPE:STRING=\n");
  EXPECT_EQ(project::cmake_cache_options(dir.path()), "");
}

}  // namespace
