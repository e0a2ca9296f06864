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
#include <sys/stat.h>

#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;
using nlohmann::json;

namespace {

// minitest: runs every `*.test.js` of a folder (its exports are the tests), like mocha.
const char* const kMinitest = R"(#!/usr/bin/env node
const fs = require('fs'), path = require('path');
const dir = process.argv[2] || 'test';
let failed = 0, passed = 0;
for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.test.js')).sort()) {
  const tests = require(path.resolve(dir, f));
  for (const [name, fn] of Object.entries(tests)) {
    const t0 = Date.now();
    try { fn(); passed++; console.log(`  ✓ ${f} ${name} (${Date.now() - t0} ms)`); }
    catch (e) { failed++; console.log(`  ✗ ${f} ${name}: ${e.message}`); }
  }
}
console.log(`${passed} passing, ${failed} failing`);
process.exit(failed ? 1 : 0);
)";

// A pytest stand-in: `python -m pytest` collects tests/test_*.py (pytest's default `prepend`
// import mode: the test file's folder first on sys.path) and runs their test_* functions.
const char* const kPytestMain = R"(import importlib.util, pathlib, sys, time, traceback
t0 = time.time()
passed = failed = errors = 0
for f in sorted(pathlib.Path("tests").glob("test_*.py")):
    sys.path.insert(0, str(f.parent.resolve()))
    spec = importlib.util.spec_from_file_location(f.stem.replace("-", "_"), f)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:
        errors += 1
        print(f"ERROR collecting {f}\nE   {type(e).__name__}: {e}")
        continue
    for name in dir(mod):
        if not name.startswith("test_"):
            continue
        try:
            getattr(mod, name)()
            passed += 1
            print(f"{f}::{name} PASSED")
        except Exception:
            failed += 1
            print(f"{f}::{name} FAILED")
            traceback.print_exc()
parts = [f"{n} {w}" for n, w in ((failed, "failed"), (passed, "passed"), (errors, "error")) if n]
print(f"{', '.join(parts) or 'no tests ran'} in {time.time() - t0:.2f}s")
sys.exit(1 if failed else 2 if errors else 0 if passed else 5)
)";

// The mock model: CliScript's plan, spec and phase; the code loop writes `files` (YAML list items
// of write_file calls, `{{loop_id}}` allowed).
std::string script_with_code(const std::string& writes) {
  std::string y = CliScript{}.yaml();
  const std::string code_rule = "  - name: code\n";
  y.insert(y.find(code_rule),
           "  - name: project-code\n    match: {loop_type: code}\n    reply:\n"
           "      tool_use:\n" +
               writes);
  return y;
}

std::string write_call(const std::string& path, const std::string& content) {
  return "        - name: write_file\n          input: {path: " + json(path).dump() +
         ", content: " + json(content).dump() + "}\n";
}

class RealProjects : public CliE2E {
 protected:
  /// The environment: the mock as the Anthropic endpoint (an environment override, so the
  /// config stays exactly as `init` wrote it).
  CliRun run(const std::string& args, int timeout_s = 240) {
    auto r = run_command("cd " + shell_quote(dir.str()) + " && timeout " +
                         std::to_string(timeout_s) + " env -u LOOPR_PROVIDER -u LOOPR_MODEL -u " +
                         "LOOPR_LOG -u OPENAI_BASE_URL -u OPENAI_API_KEY -u VIRTUAL_ENV " +
                         "ANTHROPIC_API_KEY=test ANTHROPIC_BASE_URL=" + mock->url() + " " +
                         shell_quote(LOOPR_BIN) + " " + args + " < /dev/null > " +
                         shell_quote((io / "out").string()) + " 2> " +
                         shell_quote((io / "err").string()));
    return CliRun{r.exit_code, read_file(io / "out"), read_file(io / "err")};
  }

  void commit_all(const std::string& message) {
    auto r = run_command("git add -A && git commit -qm " + shell_quote(message), dir.str());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  void git_init() {
    auto r = run_command(
        "git init -q -b main . && git config user.name test && git config user.email t@t",
        dir.str());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  /// `loopr init --json`, and the result committed as a user would.
  json init() {
    CliRun r = run("--json init");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    commit_all("loopr init");
    return r.json();
  }

  /// `loopr doctor --offline --json`: the checks by name.
  std::map<std::string, json> doctor(int expect_exit) {
    CliRun r = run("--json doctor --offline");
    EXPECT_EQ(r.exit_code, expect_exit) << r.out << r.err;
    std::map<std::string, json> out;
    const json doc = r.json();  // (a loop over a temporary's member would read freed memory)
    if (doc.contains("checks"))
      for (const auto& c : doc["checks"]) out[c["name"].get<std::string>()] = c;
    return out;
  }

  int model_calls(const std::string& loop_type) {
    int n = 0;
    for (const auto& r : mock->requests())
      if (r["headers"].value("x-loopr-loop-type", "") == loop_type) ++n;
    return n;
  }

  /// submit → approved at the gate → merged; the tree's code loop passed on its first try.
  void expect_tree_merges(const std::string& new_file) {
    CliRun r = run("submit --wait --yes 'Add a feature'");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err << loops_dump();
    // Shown at the gate (passed, or still checking: the children wait for it either way).
    EXPECT_NE((r.out + r.err).find("baseline: "), std::string::npos) << r.out << r.err;
    auto l = loops();
    json plan = plan_row("001");
    EXPECT_EQ(plan.value("tree_verdict", ""), "merged") << plan.dump() << loops_dump();
    EXPECT_EQ(baseline(plan).value("result", ""), "passed") << plan.dump();
    EXPECT_EQ(l["code-001-001-001"]["status"], "complete") << loops_dump();
    EXPECT_EQ(l["code-001-001-001"]["iteration"], 1) << "passed at once: " << loops_dump();
    EXPECT_TRUE(on_branch(dir.str(), "main", new_file)) << git("log --stat main");
    EXPECT_GT(model_calls("code"), 0);
  }

  /// A plan's row as the daemon's API has it, with its tree fields (`tree_verdict`, `baseline`):
  /// `list --json` and `show --json` are INTERFACE.md's shape, which has none.
  json plan_row(const std::string& id) {
    auto r = run_command("curl -s -m 30 --unix-socket " +
                         shell_quote((dir / ".loopr/run/loopr.sock").string()) +
                         " http://loopr/v1/loops/" + id);
    auto j = json::parse(r.output, nullptr, false);
    return j.is_object() ? j : json::object();
  }

  /// Its `baseline` (an empty object while it is null).
  static json baseline(const json& plan) {
    auto it = plan.find("baseline");
    return it != plan.end() && it->is_object() ? *it : json::object();
  }

  std::string loops_dump() {
    CliRun r = run("--json list --all");
    return r.out;
  }
};

}  // namespace

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
