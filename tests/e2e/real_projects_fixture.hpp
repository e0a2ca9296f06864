// The real-project suite's fixture (tests/e2e/real_projects_test.cpp and real_machines_test.cpp):
// a user's checkout made by the test, the real binary run with the mock model as its endpoint.
#pragma once

#include <sys/stat.h>

#include <map>

#include "e2e/cli_fixture.hpp"

namespace loopr::testing {

using nlohmann::json;

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
inline std::string script_with_code(const std::string& writes) {
  std::string y = CliScript{}.yaml();
  const std::string code_rule = "  - name: code\n";
  y.insert(y.find(code_rule),
           "  - name: project-code\n    match: {loop_type: code}\n    reply:\n"
           "      tool_use:\n" +
               writes);
  return y;
}

inline std::string write_call(const std::string& path, const std::string& content) {
  return "        - name: write_file\n          input: {path: " + json(path).dump() +
         ", content: " + json(content).dump() + "}\n";
}

class RealProjects : public CliE2E {
 protected:
  /// Set for every `loopr` run (a test-made HOME, a PATH without this machine's extras).
  std::map<std::string, std::string> env_overrides;

  /// The environment: the mock as the Anthropic endpoint (an environment override, so the
  /// config stays exactly as `init` wrote it).
  CliRun run(const std::string& args, int timeout_s = 240) {
    std::string env_set;
    for (const auto& [name, value] : env_overrides) env_set += name + "=" + shell_quote(value) + " ";
    auto r = run_command("cd " + shell_quote(dir.str()) + " && timeout " +
                         std::to_string(timeout_s) + " env -u LOOPR_PROVIDER -u LOOPR_MODEL -u " +
                         "LOOPR_LOG -u OPENAI_BASE_URL -u OPENAI_API_KEY -u VIRTUAL_ENV " +
                         env_set + "ANTHROPIC_API_KEY=test ANTHROPIC_BASE_URL=" + mock->url() + " " +
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


}  // namespace loopr::testing
