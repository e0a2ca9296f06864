// `loopr init` finds the test command (issue #21 item 1): one fixture repository per ecosystem,
// through the real binary. The config it writes must load (`loopr config`), carry the command
// in loops.code.validation with a comment saying where it came from, and list the other
// candidates as comments.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "e2e/tool_stubs.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr::testing;

namespace {

struct Fixture {
  TempDir dir{"loopr-init-detect"};

  /// Writes `files` (path → content), commits them, and runs `loopr init --json ARGS`.
  nlohmann::json init(const std::vector<std::pair<std::string, std::string>>& files,
                      const std::string& args = "") {
    for (const auto& [path, content] : files) write_file(dir / path, content);
    auto git = run_command(
        "git init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t commit -q "
        "--allow-empty -m init",
        dir.str());
    EXPECT_EQ(git.exit_code, 0) << git.output;
    last = run_command(with_tool_stubs() + std::string(LOOPR_BIN) + " -C " + shell_quote(dir.str()) + " --json init " +
                       args + " 2>" + shell_quote((dir / ".init.err").string()));
    EXPECT_EQ(last.exit_code, 0) << last.output << read_file(dir / ".init.err");
    auto doc = nlohmann::json::parse(last.output, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << last.output;
    // What was written is a valid config.
    auto check = run_command(std::string(LOOPR_BIN) + " -C " + shell_quote(dir.str()) + " config");
    EXPECT_EQ(check.exit_code, 0) << check.output;
    return doc;
  }

  std::string config() const { return read_file(dir / ".loopr/config.yml"); }

  /// The `code:` line of the written config.
  std::string code_line() const {
    std::string c = config();
    auto p = c.find("\n  code:");
    if (p == std::string::npos) return {};
    return c.substr(p + 1, c.find('\n', p + 1) - p - 1);
  }

  CommandOutput last;
};

std::string quoted(const std::string& command) { return "validation: \"" + command + "\""; }

// Checks the detected command, its source, and that the file has both.
void expect_detected(const nlohmann::json& doc, const Fixture& f, const std::string& command,
                     const std::string& source_part) {
  ASSERT_TRUE(doc.contains("validation")) << doc.dump();
  EXPECT_EQ(doc["validation"]["command"], command) << doc.dump();
  EXPECT_NE(doc["validation"]["source"].get<std::string>().find(source_part), std::string::npos)
      << doc.dump();
  EXPECT_NE(f.code_line().find(quoted(command)), std::string::npos) << f.config();
  EXPECT_NE(
      f.config().find("# The test command, from " + doc["validation"]["source"].get<std::string>()),
      std::string::npos)
      << f.config();
}

/// `loopr init` in a repository of `files` alone detects `command` from `source_part`.
void expect_init_detects(const std::vector<std::pair<std::string, std::string>>& files,
                         const std::string& command, const std::string& source_part) {
  Fixture f;
  expect_detected(f.init(files), f, command, source_part);
}

/// `loopr init` in a repository of `files` alone detects no test command.
void expect_init_detects_nothing(const std::vector<std::pair<std::string, std::string>>& files) {
  Fixture f;
  auto doc = f.init(files);
  EXPECT_TRUE(doc["validation"]["command"].is_null()) << doc.dump();
}

const char* kPackageJson = R"({"name":"x","scripts":{"test":"node --test"}})";

}  // namespace

TEST(InitDetectTest, NodeUsesTheLockfilesPackageManager) {
  expect_init_detects({{"package.json", kPackageJson}, {"package-lock.json", "{}"}}, "npm test",
                      "package-lock.json");
  expect_init_detects({{"package.json", kPackageJson}, {"pnpm-lock.yaml", "lockfileVersion: 6\n"}},
                      "pnpm test", "pnpm-lock.yaml");
  expect_init_detects({{"package.json", kPackageJson}, {"yarn.lock", "# yarn\n"}}, "yarn test",
                      "yarn.lock");
  // No lockfile: npm.
  expect_init_detects({{"package.json", kPackageJson}}, "npm test", "package.json scripts.test");
}

TEST(InitDetectTest, NpmsPlaceholderTestScriptIsNotATestCommand) {
  expect_init_detects_nothing(
      {{"package.json", R"({"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}})"}});
}

TEST(InitDetectTest, CargoGoAndElixir) {
  expect_init_detects({{"Cargo.toml", "[package]\nname = \"x\"\n"}}, "cargo test", "Cargo.toml");
  expect_init_detects({{"go.mod", "module example.com/x\n"}}, "go test ./...", "go.mod");
  expect_init_detects({{"mix.exs", "defmodule X.MixProject do\nend\n"}}, "mix test", "mix.exs");
}

TEST(InitDetectTest, PythonPrefersConfiguredPytestThenToxThenAssumesPytest) {
  expect_init_detects({{"pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-q\"\n"},
                       {"tox.ini", "[tox]\nenvlist = py3\n"}},
                      "pytest", "[tool.pytest.ini_options]");
  expect_init_detects({{"setup.cfg", "[tool:pytest]\ntestpaths = tests\n"}}, "pytest", "setup.cfg");
  expect_init_detects({{"pytest.ini", "[pytest]\n"}}, "pytest", "pytest.ini");
  expect_init_detects({{"tox.ini", "[tox]\nenvlist = py3\n"}}, "tox", "tox.ini");
  expect_init_detects({{"pyproject.toml", "[project]\nname = \"x\"\n"}}, "pytest",
                      "pytest assumed");
}

TEST(InitDetectTest, MakefileWithATestTargetAndWithout) {
  expect_init_detects({{"Makefile", "all:\n\tcc -o x x.c\n\ntest: all\n\t./x --self-test\n"}},
                      "make test", "Makefile");
  // A variable named test is no target.
  expect_init_detects_nothing({{"Makefile", "test := yes\nall:\n\techo $(test)\n"}});
}

TEST(InitDetectTest, MesonGradleMavenAndRake) {
  expect_init_detects({{"meson.build", "project('x', 'c')\n"}},
                      "(test -d build || meson setup build) && meson test -C build", "meson.build");
  expect_init_detects({{"build.gradle", "plugins { id 'java' }\n"}}, "gradle test", "build.gradle");
  {
    Fixture f;  // the project's wrapper wins
    write_file(f.dir / "gradlew", "#!/bin/sh\n");
    ::chmod((f.dir / "gradlew").c_str(), 0755);
    expect_detected(f.init({{"build.gradle.kts", "plugins { java }\n"}}), f, "./gradlew test",
                    "gradlew");
  }
  expect_init_detects({{"pom.xml", "<project/>\n"}}, "mvn test", "pom.xml");
  expect_init_detects(
      {{"Gemfile", "source 'https://rubygems.org'\n"}, {"Rakefile", "task :test\n"}},
      "bundle exec rake test", "Gemfile + Rakefile");
  // A Gemfile alone says nothing about tests.
  expect_init_detects_nothing({{"Gemfile", "source 'https://rubygems.org'\n"}});
}

TEST(InitDetectTest, TestScriptsRunWithShOrDirectly) {
  expect_init_detects({{"tests/run.sh", "echo ok\n"}}, "sh tests/run.sh", "tests/run.sh");
  {
    Fixture f;
    write_file(f.dir / "run_tests.sh", "#!/bin/sh\necho ok\n");
    ::chmod((f.dir / "run_tests.sh").c_str(), 0755);
    expect_detected(f.init({}), f, "./run_tests.sh", "run_tests.sh");
  }
}

// The detected command must really run the project's tests: a tiny CMake project with one
// test, the command run the way a code loop's validation runs it (sh -c in the work tree), and
// its build folder kept out of git (a code loop's checkpoint would commit it otherwise).
TEST(InitDetectTest, CMakeCommandBuildsAndTestsAndItsBuildFolderIsIgnored) {
  Fixture f;
  auto doc = f.init({{"CMakeLists.txt",
                      "cmake_minimum_required(VERSION 3.16)\nproject(x NONE)\nenable_testing()\n"
                      "add_test(NAME passes COMMAND true)\n"}});
  std::string command = doc["validation"]["command"];
  EXPECT_NE(command.find("ctest --test-dir build"), std::string::npos) << command;
  EXPECT_NE(read_file(f.dir / ".gitignore").find("/build/"), std::string::npos);
  EXPECT_NE(doc["changed"].dump().find("/build/"), std::string::npos) << doc.dump();
  auto run = run_command(command + " 2>&1", f.dir.str());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("100% tests passed"), std::string::npos) << run.output;
  auto status = run_command("git status --porcelain --untracked-files=all", f.dir.str());
  EXPECT_EQ(status.output.find("build/"), std::string::npos) << status.output;
}

TEST(InitDetectTest, ABuildFolderAlreadyIgnoredIsNotAddedAgain) {
  Fixture f;
  auto doc = f.init({{"CMakeLists.txt", "project(x NONE)\n"}, {".gitignore", "build*/\n"}});
  EXPECT_EQ(read_file(f.dir / ".gitignore").find("/build/"), std::string::npos)
      << read_file(f.dir / ".gitignore");
}

TEST(InitDetectTest, SeveralFoundTheFirstIsUsedAndTheOthersAreComments) {
  Fixture f;
  auto doc = f.init({{"package.json", kPackageJson},
                     {"Cargo.toml", "[package]\n"},
                     {"Makefile", "test:\n\techo ok\n"}});
  expect_detected(doc, f, "npm test", "package.json");
  ASSERT_EQ(doc["validation"]["others"].size(), 2u) << doc.dump();
  EXPECT_EQ(doc["validation"]["others"][0]["command"], "cargo test");
  EXPECT_EQ(doc["validation"]["others"][1]["command"], "make test");
  std::string config = f.config();
  EXPECT_NE(config.find("#   cargo test"), std::string::npos) << config;
  EXPECT_NE(config.find("#   make test"), std::string::npos) << config;
  // Commented out, so they are no keys: the file loads (checked by init()) with npm test.
}

TEST(InitDetectTest, NothingFoundLeavesAPlaceholderAndSaysSo) {
  Fixture f;
  f.init({{"README.md", "# nothing to test here\n"}});
  EXPECT_NE(f.code_line().find("validation: \"\""), std::string::npos) << f.config();
  EXPECT_NE(f.config().find("found no test command"), std::string::npos) << f.config();
  // Without --json the printed line asks for it.
  Fixture g;
  write_file(g.dir / "README.md", "x\n");
  run_command(
      "git init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t "
      "commit -q -m init",
      g.dir.str());
  auto r = run_command(std::string(LOOPR_BIN) + " -C " + shell_quote(g.dir.str()) + " init");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no test command found: put yours in loops.code.validation"),
            std::string::npos)
      << r.output;
}

TEST(InitDetectTest, ValidationFlagSetsItExplicitly) {
  Fixture f;
  auto doc = f.init({{"Cargo.toml", "[package]\n"}}, "--validation 'ctest --test-dir out -j 2'");
  EXPECT_EQ(doc["validation"]["command"], "ctest --test-dir out -j 2");
  EXPECT_NE(doc["validation"]["source"].get<std::string>().find("--validation"), std::string::npos);
  EXPECT_NE(f.code_line().find(quoted("ctest --test-dir out -j 2")), std::string::npos)
      << f.config();
  std::string init = std::string(LOOPR_BIN) + " -C " + shell_quote(f.dir.str()) + " init ";
  // Idempotent with the same command; a different one is refused, the file kept.
  EXPECT_EQ(run_command(init + "--validation 'ctest --test-dir out -j 2'").exit_code, 0);
  auto other = run_command(init + "--validation 'make check'");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_EQ(other.output.rfind("loopr: .loopr/config.yml already sets loops.code.validation", 0),
            0u)
      << other.output;
  auto empty = run_command(init + "--validation ''");
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  // Quotes and backslashes survive the YAML.
  const std::string tricky_command = R"(printf "%s\n" 'a b' | grep -q "a\ b")";
  Fixture g;
  auto tricky = g.init({}, "--validation " + shell_quote(tricky_command));
  EXPECT_EQ(tricky["validation"]["command"], tricky_command);
  // Read back from the file: init accepts the same command again only if it loads equal.
  auto again = run_command(std::string(LOOPR_BIN) + " -C " + shell_quote(g.dir.str()) +
                           " init --validation " + shell_quote(tricky_command));
  EXPECT_EQ(again.exit_code, 0) << again.output << g.config();
}

// Issue 29: init writes the harness it infers into the config, and `loopr config` shows what is
// protected (the harness, existing tests, what holds a tree) in text and JSON.
TEST(InitDetectTest, TheInferredHarnessIsWrittenAndShown) {
  Fixture f;
  auto doc = f.init({{"tests/run.sh", "echo ok\n"}});
  ASSERT_TRUE(doc.contains("protect_harness")) << doc.dump();
  EXPECT_EQ(doc["protect_harness"][0], "/tests/run.sh") << doc.dump();
  EXPECT_NE(f.config().find("harness: [\"/tests/run.sh\", \"pytest.ini\""), std::string::npos)
      << f.config();
  auto text = run_command(std::string(LOOPR_BIN) + " -C " + shell_quote(f.dir.str()) + " config");
  EXPECT_NE(text.output.find("protected paths"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("/tests/run.sh"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find(".vscode/"), std::string::npos) << text.output;
  auto json = run_command(std::string(LOOPR_BIN) + " -C " + shell_quote(f.dir.str()) +
                          " --json config");
  auto shown = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_TRUE(shown.is_object()) << json.output;
  EXPECT_EQ(shown["protect"]["harness"][0], "/tests/run.sh");
  EXPECT_FALSE(shown["protect"]["harness_inferred"].get<bool>());
  EXPECT_EQ(shown["review"]["enabled"], false);
}
