// Real projects (issue 27) through the real binary, offline: each fixture is made here the way a
// user's checkout is (dependencies installed but not in git), then `init` (its config used
// untouched) → `doctor` → `submit --wait --yes` (approved at the gate) → the tree complete and
// merged; a base whose tests fail is stopped before any code loop, with no code-loop model call.
//   - Node: `npm test` runs a test runner that exists only in the untracked node_modules
//     (node_modules/.bin/minitest), and the code requires a package from there too.
//   - Python: a `src/` layout package, a venv in the checkout (`python3 -m venv
//     --system-site-packages`) with an editable install of it written as pip writes one (a
//     `__editable__.*.pth` naming the checkout's src/, a dist-info with direct_url.json); the
//     test runner is a small `pytest` module in the venv (PyPI is not reachable here). The code
//     loop adds a module the tests import: only the worktree has it, so the tests pass only when
//     they import the worktree's code, never the checkout's the editable install points at.
//   - A project whose `make test` fails on its base branch.
#include "e2e/real_projects_fixture.hpp"

using namespace loopr::testing;


TEST_F(RealProjects, NodePackageWithUntrackedNodeModulesCompletesWithWhatInitWrote) {
  git_init();
  write_file(dir / "package.json",
             R"({"name": "fx-node", "version": "1.0.0", "main": "index.js",)"
             R"( "scripts": {"test": "minitest test"}, "devDependencies": {"minitest": "^1.0.0"},)"
             R"( "dependencies": {"leftpad": "^1.0.0"}})"
             "\n");
  write_file(dir / "package-lock.json", R"({"name": "fx-node", "lockfileVersion": 3})"
                                        "\n");
  write_file(dir / "index.js",
             "const pad = require('leftpad');\nexports.label = (s) => pad(s, 5);\n");
  write_file(dir / "test/label.test.js",
             "const assert = require('assert');\nconst { label } = require('..');\n"
             "exports.pads = () => assert.strictEqual(label('ab'), '   ab');\n");
  write_file(dir / ".gitignore", "node_modules/\n");
  // `npm install` made these: not in git.
  write_file(dir / "node_modules/leftpad/package.json",
             R"({"name": "leftpad", "version": "1.0.0"})");
  write_file(dir / "node_modules/leftpad/index.js",
             "module.exports = (s, n) => ' '.repeat(Math.max(0, n - s.length)) + s;\n");
  write_file(dir / "node_modules/minitest/package.json",
             R"({"name": "minitest", "version": "1.0.0", "bin": {"minitest": "bin/minitest.js"}})");
  write_file(dir / "node_modules/minitest/bin/minitest.js", kMinitest);
  ::chmod((dir / "node_modules/minitest/bin/minitest.js").c_str(), 0755);
  std::filesystem::create_directories(dir / "node_modules/.bin");
  std::filesystem::create_symlink("../minitest/bin/minitest.js",
                                  dir / "node_modules/.bin/minitest");
  commit_all("a node package");
  ASSERT_EQ(run_command("npm test", dir.str()).exit_code, 0) << "passes in the checkout";
  mock = std::make_unique<MockLlm>(script_with_code(
      write_call("test/{{loop_id}}.test.js",
                 "const assert = require('assert');\nconst pad = require('leftpad');\n"
                 "exports.padsMore = () => assert.strictEqual(pad('x', 3), '  x');\n")));

  json doc = init();
  EXPECT_EQ(doc["validation"]["command"], "npm test") << doc.dump();
  EXPECT_EQ(doc["provisioning"]["read_only"], json::array({"node_modules"})) << doc.dump();
  EXPECT_NE(read_file(dir / ".loopr/config.yml").find("read_only: [\"node_modules\"]"),
            std::string::npos)
      << read_file(dir / ".loopr/config.yml");
  auto checks = doctor(0);
  EXPECT_EQ(checks["tests"]["status"], "ok") << checks["tests"].dump();
  EXPECT_NE(checks["tests"]["message"].get<std::string>().find(
                "`npm test` passes on main in a fresh worktree"),
            std::string::npos)
      << checks["tests"].dump();
  expect_tree_merges("test/code-001-001-001.test.js");
  EXPECT_FALSE(on_branch(dir.str(), "main", "node_modules/leftpad/index.js"))
      << "the mounted node_modules is never committed";
}

TEST_F(RealProjects, PythonSrcLayoutWithVenvAndEditableInstallImportsTheWorktreesCode) {
  git_init();
  write_file(dir / "pyproject.toml",
             "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = "
             "\"setuptools.build_meta\"\n\n[project]\nname = \"calc\"\nversion = \"0.1\"\n\n"
             "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n");
  write_file(dir / "src/calc/__init__.py", "def add(a, b):\n    return a + b\n");
  write_file(dir / "tests/test_calc.py",
             "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n");
  write_file(dir / ".gitignore", ".venv/\n*.egg-info/\n");
  commit_all("a python package");
  // The venv and `pip install -e .`, as pip leaves them (no network: written here).
  auto venv =
      run_command("/usr/bin/python3 -m venv --system-site-packages --without-pip .venv", dir.str());
  ASSERT_EQ(venv.exit_code, 0) << venv.output;
  std::string site = run_command(
                         ".venv/bin/python -c 'import sysconfig; "
                         "print(sysconfig.get_paths()[\"purelib\"])'",
                         dir.str())
                         .output;
  site = site.substr(0, site.find('\n'));
  ASSERT_FALSE(site.empty());
  const std::string root = std::filesystem::canonical(dir.path()).string();
  write_file(site + "/__editable__.calc-0.1.pth", root + "/src\n");
  write_file(site + "/calc-0.1.dist-info/METADATA",
             "Metadata-Version: 2.1\nName: calc\nVersion: 0.1\n");
  write_file(site + "/calc-0.1.dist-info/INSTALLER", "pip\n");
  write_file(site + "/calc-0.1.dist-info/direct_url.json",
             R"({"dir_info": {"editable": true}, "url": "file://)" + root + "\"}\n");
  write_file(site + "/calc-0.1.dist-info/RECORD",
             "__editable__.calc-0.1.pth,,\ncalc-0.1.dist-info/METADATA,,\n");
  write_file(site + "/pytest/__init__.py", "");
  write_file(site + "/pytest/__main__.py", kPytestMain);
  auto here = run_command(".venv/bin/python -m pytest", dir.str());
  ASSERT_EQ(here.exit_code, 0) << "passes in the checkout: " << here.output;
  // The code loop adds a module and its test: only the worktree has calc/mul.py.
  mock = std::make_unique<MockLlm>(script_with_code(
      write_call("src/calc/mul.py", "def mul(a, b):\n    return a * b\n") +
      write_call("tests/test_{{loop_id}}.py",
                 "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n")));

  json doc = init();
  EXPECT_EQ(doc["validation"]["command"], ".venv/bin/python -m pytest") << doc.dump();
  EXPECT_EQ(doc["provisioning"]["read_only"], json::array({".venv"})) << doc.dump();
  EXPECT_EQ(doc["provisioning"]["env"], json::array({"PYTHONPATH=$WORKTREE/src"})) << doc.dump();
  EXPECT_NE(read_file(dir / ".gitignore").find("__pycache__/"), std::string::npos);
  auto checks = doctor(0);
  EXPECT_EQ(checks["tests"]["status"], "ok") << checks["tests"].dump();
  expect_tree_merges("src/calc/mul.py");
  EXPECT_FALSE(on_branch(dir.str(), "main", ".venv/pyvenv.cfg"));
  std::string tree = git("ls-tree -r --name-only main");
  EXPECT_EQ(tree.find("__pycache__"), std::string::npos) << tree;
}

TEST_F(RealProjects, ABaseWhoseTestsFailIsStoppedBeforeAnyCodeLoopWithTheOutput) {
  git_init();
  write_file(dir / "Makefile",
             "test:\n\t@echo 'test_total: expected 3, got 4'; echo '1 failed, 7 passed in "
             "0.31s'; exit 1\n");
  commit_all("a project whose tests fail");
  mock = std::make_unique<MockLlm>(CliScript{}.yaml());

  json doc = init();
  EXPECT_EQ(doc["validation"]["command"], "make test") << doc.dump();
  auto checks = doctor(1);
  EXPECT_EQ(checks["tests"]["status"], "fail") << checks["tests"].dump();
  EXPECT_NE(checks["tests"]["message"].get<std::string>().find("`make test` failed with exit code"),
            std::string::npos)
      << checks["tests"].dump();
  EXPECT_NE(checks["tests"].value("hint", "").find("sandbox.read_only"), std::string::npos);
  EXPECT_NE(checks["tests"].value("detail", "").find("expected 3, got 4"), std::string::npos)
      << checks["tests"].dump();

  CliRun r = run("submit --wait --yes 'Add a feature'");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("blocked before any code loop"), std::string::npos)
      << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("expected 3, got 4"), std::string::npos) << r.out << r.err;
  auto l = loops();
  EXPECT_EQ(l["001"]["status"], "blocked") << loops_dump();
  EXPECT_EQ(l["001"]["end_reason"], "baseline_failed") << loops_dump();
  json plan = plan_row("001");
  EXPECT_EQ(baseline(plan).value("result", ""), "failed") << plan.dump();
  EXPECT_EQ(l.size(), 1u) << "no spec, phase or code loop was made: " << loops_dump();
  EXPECT_EQ(model_calls("code"), 0);
  EXPECT_GT(model_calls("plan"), 0);
  // `show` has the baseline and the reason; the whole output is in the log.
  CliRun show = run("show 001");
  EXPECT_NE(show.out.find("baseline:"), std::string::npos) << show.out;
  std::string log = baseline(plan).value("log", "");
  EXPECT_NE(read_file(dir / log).find("expected 3, got 4"), std::string::npos) << log;

  // The person fixes the base and resumes: checked again, and the tree goes on.
  write_file(dir / "Makefile", "test:\n\t@echo '8 passed'\n");
  commit_all("fix the tests");
  CliRun resumed = run("resume 001");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  ASSERT_TRUE(wait_until([&] { return plan_row("001").value("tree_verdict", "") == "merged"; },
                         std::chrono::seconds(120)))
      << loops_dump();
  EXPECT_EQ(baseline(plan_row("001")).value("result", ""), "passed");
  EXPECT_GT(model_calls("code"), 0);
}
