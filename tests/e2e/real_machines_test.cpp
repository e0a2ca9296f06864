// Real developer machines (issue 41) through the real binary and daemon, offline: each fixture is
// a checkout set up the way its README says, on a machine whose toolchains live in a (test-made)
// home; `init` writes the config, used untouched; the tree completes and merges.
//   - Python, venv made from an interpreter under the home (pyenv's layout): init shows that
//     installation read-only; without it, doctor names the hidden path and the line to add.
//   - Python, flat, tox.ini (tox not installed) + a Makefile whose venv is in ~/.virtualenvs.
//   - Node whose tests write a timestamped coverage/ report: recorded by the baseline check,
//     never committed, two code loops merge.
//   - A Go module: warm through the repository's own build cache.
//   - CMake + ctest: the user's build/CMakeCache.txt option is reused (2 tests, not 1).
#include <unistd.h>

#include "e2e/real_projects_fixture.hpp"

using namespace loopr::testing;
namespace fs = std::filesystem;

namespace {

class RealMachines : public RealProjects {
 protected:
  TempDir home_dir{"loopr-home"};
  fs::path home = fs::canonical(home_dir.path());

  void SetUp() override {
    RealProjects::SetUp();
    env_overrides["HOME"] = home.string();
    env_overrides["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  }

  void sh_ok(const std::string& command, const fs::path& where) {
    auto r = run_command(command, where.string());
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.output;
  }

  /// A CPython under the home as pyenv installs it (the machine's own interpreter, copied).
  fs::path pyenv_python() {
    fs::path prefix = home / ".pyenv/versions/3.11.2";
    fs::create_directories(prefix / "bin");
    fs::path real = fs::canonical("/usr/bin/python3");
    fs::copy_file(real, prefix / "bin" / real.filename());
    fs::create_symlink(real.filename(), prefix / "bin/python3");
    return prefix;
  }

  /// The pytest stand-in in the venv at `venv`.
  void pytest_in(const fs::path& venv) {
    std::string site = run_command(shell_quote((venv / "bin/python").string()) +
                                   " -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'")
                           .output;
    site = site.substr(0, site.find('\n'));
    ASSERT_FALSE(site.empty());
    write_file(site + "/pytest/__init__.py", "");
    write_file(site + "/pytest/__main__.py", kPytestMain);
  }

  /// A committed flat Python package whose .venv (ignored) was made from an interpreter under
  /// the home, with the pytest stand-in; the interpreter's prefix.
  fs::path python_project_with_a_venv_from_the_home() {
    git_init();
    write_file(dir / "pyproject.toml",
               "[project]\nname = \"calc\"\nversion = \"0.1\"\n\n[tool.pytest.ini_options]\n"
               "testpaths = [\"tests\"]\n");
    write_file(dir / ".gitignore", ".venv/\n");
    flat_python_package();
    commit_all("a python package");
    fs::path prefix = pyenv_python();
    sh_ok(shell_quote((prefix / "bin/python3").string()) + " -m venv --without-pip .venv", dir.path());
    pytest_in(dir / ".venv");
    return prefix;
  }

  void flat_python_package() {
    write_file(dir / "calc.py", "def add(a, b):\n    return a + b\n");
    write_file(dir / "tests/test_calc.py",
               "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n");
    mock = std::make_unique<MockLlm>(script_with_code(
        write_call("mul.py", "def mul(a, b):\n    return a * b\n") +
        write_call("tests/test_{{loop_id}}.py",
                   "from mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n")));
  }

  static bool has(const json& list, const std::string& item) {
    for (const auto& x : list)
      if (x == item) return true;
    return false;
  }
};

}  // namespace

TEST_F(RealMachines, PythonVenvMadeFromAnInterpreterUnderTheHomeCompletes) {
  const fs::path prefix = python_project_with_a_venv_from_the_home();
  sh_ok(".venv/bin/python -m pytest", dir.path());

  json doc = init();
  EXPECT_EQ(doc["validation"]["command"], ".venv/bin/python -m pytest") << doc.dump();
  const json& read_only = doc["provisioning"]["read_only"];
  EXPECT_TRUE(has(read_only, ".venv")) << doc.dump();
  EXPECT_TRUE(has(read_only, prefix.string())) << doc.dump();
  for (const auto& p : read_only) EXPECT_NE(p, home.string()) << "never the whole home";
  const std::string config = read_file(dir / ".loopr/config.yml");
  EXPECT_NE(config.find("# loopr init: " + prefix.string() + " read-only"), std::string::npos)
      << config;

  // Without that line, the worktree's python is "not found": doctor says which path and line.
  std::string without = config;
  const std::string entry = ", " + json(prefix.string()).dump();
  ASSERT_NE(without.find(entry), std::string::npos) << config;
  without.erase(without.find(entry), entry.size());
  write_file(dir / ".loopr/config.yml", without);
  auto hidden = doctor(1);
  const std::string message = hidden["tests"].value("message", "");
  EXPECT_NE(message.find(prefix.string()), std::string::npos) << hidden["tests"].dump();
  EXPECT_NE(message.find("sandbox.read_only"), std::string::npos) << hidden["tests"].dump();
  write_file(dir / ".loopr/config.yml", config);

  auto checks = doctor(0);
  EXPECT_EQ(checks["tests"]["status"], "ok") << checks["tests"].dump();
  // One list: what init found is in the sandbox's view doctor prints, with the repository's caches.
  const std::string view = checks["sandbox"].dump();
  EXPECT_NE(view.find(prefix.string()), std::string::npos) << view;
  EXPECT_NE(view.find(".cache/loopr"), std::string::npos) << view;
  expect_tree_merges("mul.py");
}

TEST_F(RealMachines, TheBaselineCheckSaysWhichHiddenToolchainIsMissingAndTheLineToAdd) {
  const fs::path prefix = python_project_with_a_venv_from_the_home();
  init();
  // The person removed init's line for the interpreter under the home.
  std::string config = read_file(dir / ".loopr/config.yml");
  const std::string entry = ", " + json(prefix.string()).dump();
  ASSERT_NE(config.find(entry), std::string::npos) << config;
  config.erase(config.find(entry), entry.size());
  write_file(dir / ".loopr/config.yml", config);
  CliRun r = run("submit 'Add a feature'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json seen;
  ASSERT_TRUE(wait_until(
      [&] {
        seen = baseline(plan_row("001"));
        const std::string result = seen.value("result", "");
        return !result.empty() && result != "checking";
      },
      std::chrono::seconds(120)))
      << seen.dump();
  EXPECT_EQ(seen.value("result", ""), "failed") << seen.dump();
  const std::string summary = seen.value("summary", "");
  EXPECT_NE(summary.find(prefix.string()), std::string::npos) << summary;
  EXPECT_NE(summary.find("sandbox.read_only"), std::string::npos) << summary;
  run("stop 001");
}

TEST_F(RealMachines, ToxNotInstalledIsSkippedForTheMakefileWhoseVenvIsUnderTheHome) {
  git_init();
  write_file(dir / "tox.ini",
             "[tox]\nenvlist = py3\n\n[testenv]\ndeps = pytest\ncommands = pytest {posargs}\n");
  write_file(dir / "Makefile",
             "VENV ?= $(HOME)/.virtualenvs/fx\n\n.PHONY: test\ntest:\n\t$(VENV)/bin/python -m "
             "pytest\n");
  flat_python_package();
  commit_all("a flat python project");
  fs::path venv = home / ".virtualenvs/fx";
  sh_ok("/usr/bin/python3 -m venv --without-pip " + shell_quote(venv.string()), dir.path());
  pytest_in(venv);
  sh_ok("HOME=" + shell_quote(home.string()) + " make test", dir.path());

  CliRun dry = run("init --dry-run");
  EXPECT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_NE(dry.out.find("skipped  tox (tox.ini): `tox` is not installed"), std::string::npos)
      << dry.out;
  EXPECT_NE(dry.out.find("chosen   make test"), std::string::npos) << dry.out;
  EXPECT_FALSE(fs::exists(dir / ".loopr/config.yml")) << "--dry-run writes nothing";

  json doc = init();
  EXPECT_EQ(doc["validation"]["command"], "make test") << doc.dump();
  ASSERT_GE(doc["validation"]["skipped"].size(), 2u) << doc.dump();
  EXPECT_EQ(doc["validation"]["skipped"][0]["command"], "tox") << doc.dump();
  EXPECT_NE(doc["validation"]["skipped"][0]["reason"].get<std::string>().find("not installed"),
            std::string::npos);
  EXPECT_EQ(doc["validation"]["skipped"][1]["command"], "pytest") << doc.dump();
  EXPECT_EQ(doc["provisioning"]["read_only"], json::array({venv.string()})) << doc.dump();
  auto checks = doctor(0);
  EXPECT_EQ(checks["tests"]["status"], "ok") << checks["tests"].dump();
  expect_tree_merges("mul.py");
}

TEST_F(RealMachines, NodeTestsWritingCoverageAreRecordedAndNeverCommitted) {
  git_init();
  write_file(dir / "package.json",
             R"({"name": "fx-cov", "version": "1.0.0", "scripts": {"test": "minitest test"}})"
             "\n");
  write_file(dir / "package-lock.json", R"({"name": "fx-cov", "lockfileVersion": 3})"
                                        "\n");
  write_file(dir / "test/one.test.js", "exports.one = () => {};\n");
  write_file(dir / ".gitignore", "node_modules/\n");
  // The runner writes a timestamped report, as c8 and nyc do.
  std::string runner = kMinitest;
  runner.insert(runner.find("process.exit"),
                "fs.mkdirSync('coverage', {recursive: true});\n"
                "fs.writeFileSync('coverage/index.html', `<p>${Date.now()} ${process.pid}</p>`);\n");
  write_file(dir / "node_modules/minitest/bin/minitest.js", runner);
  ::chmod((dir / "node_modules/minitest/bin/minitest.js").c_str(), 0755);
  fs::create_directories(dir / "node_modules/.bin");
  fs::create_symlink("../minitest/bin/minitest.js", dir / "node_modules/.bin/minitest");
  commit_all("a node package");
  CliScript script;
  script.specs = {"alpha", "beta"};  // two code loops, each running the tests
  std::string y = script.yaml();
  const std::string code_rule = "  - name: code\n";
  y.insert(y.find(code_rule),
           "  - name: project-code\n    match: {loop_type: code}\n    reply:\n      tool_use:\n" +
               write_call("test/{{loop_id}}.test.js", "exports.more = () => {};\n"));
  mock = std::make_unique<MockLlm>(y);

  init();
  auto checks = doctor(0);
  EXPECT_NE(checks["tests"].value("message", "").find("coverage/"), std::string::npos)
      << "doctor offers the .gitignore line: " << checks["tests"].dump();
  CliRun r = run("submit --wait --yes 'Add a feature'");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << loops_dump();
  json plan = plan_row("001");
  EXPECT_EQ(plan.value("tree_verdict", ""), "merged") << plan.dump() << loops_dump();
  EXPECT_TRUE(has(baseline(plan).value("outputs", json::array()), "coverage/")) << plan.dump();
  EXPECT_TRUE(on_branch(dir.str(), "main", "test/code-001-002-001.test.js")) << git("log --stat");
  EXPECT_FALSE(on_branch(dir.str(), "main", "coverage/index.html")) << git("log --stat main");
}

TEST_F(RealMachines, AGoModuleCompletesWithTheRepositorysWarmBuildCache) {
  if (run_command("command -v go").exit_code != 0)
    GTEST_SKIP() << "go is not installed (tools/install-deps.sh installs golang-go)";
  git_init();
  write_file(dir / "go.mod", "module example.com/fx\n\ngo 1.19\n");
  write_file(dir / "calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n");
  write_file(dir / "calc_test.go",
             "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n"
             "\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n");
  commit_all("a go module");
  mock = std::make_unique<MockLlm>(script_with_code(write_call(
      "{{loop_id}}_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestMore(t *testing.T) "
                             "{\n\tif Add(1, 1) != 2 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n")));

  json doc = init();
  EXPECT_EQ(doc["validation"]["command"], "go test ./...") << doc.dump();
  EXPECT_EQ(doc["provisioning"]["read_only"], json::array()) << "Debian's go: nothing hidden";
  expect_tree_merges("code-001-001-001_test.go");
  EXPECT_FALSE(fs::is_empty(dir / ".loopr/cache/go-build")) << "the repository's cache was used";
  EXPECT_FALSE(fs::exists(home / ".cache/go-build")) << "never the person's own cache";
  EXPECT_EQ(git("status --porcelain").find(".loopr/cache"), std::string::npos);
}

TEST_F(RealMachines, CMakeReusesTheUsersCacheOption) {
  if (run_command("command -v cmake && command -v ctest").exit_code != 0)
    GTEST_SKIP() << "cmake is not installed";
  git_init();
  write_file(dir / "CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.16)\nproject(fx NONE)\nenable_testing()\n"
             "option(WITH_EXTRA \"the extra tests\" OFF)\n"
             "add_test(NAME base COMMAND sh -c \"test -f ${CMAKE_SOURCE_DIR}/lib.txt\")\n"
             "if(WITH_EXTRA)\n  add_test(NAME extra COMMAND sh -c \"grep -q lib "
             "${CMAKE_SOURCE_DIR}/lib.txt\")\nendif()\n");
  write_file(dir / "lib.txt", "lib\n");
  write_file(dir / ".gitignore", "/build/\n");
  commit_all("a cmake project");
  sh_ok("cmake -S . -B build -DWITH_EXTRA=ON >/dev/null && ctest --test-dir build | grep -q "
        "'out of 2'",
        dir.path());
  mock = std::make_unique<MockLlm>(CliScript{}.yaml());

  json doc = init();
  EXPECT_NE(doc["validation"]["command"].get<std::string>().find(
                "cmake -S . -B build -DWITH_EXTRA=ON &&"),
            std::string::npos)
      << doc.dump();
  expect_tree_merges("code/code-001-001-001.txt");
  std::string log = baseline(plan_row("001")).value("log", "");
  EXPECT_NE(read_file(dir / log).find("out of 2"), std::string::npos)
      << "the loops run the user's 2 tests: " << read_file(dir / log);
}
