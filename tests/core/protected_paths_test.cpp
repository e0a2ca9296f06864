// The protection rule and the tree hold as pure functions: patterns, a loop's changes against
// the harness, existing tests and its phase's `- Files:`, the held paths of a tree, the
// defaults `loopr init` writes, and the `protect:` / `loops.review` config keys.
#include <gtest/gtest.h>

#include <algorithm>

#include <loopr/core/config.hpp>
#include <loopr/core/protected_paths.hpp>

using namespace loopr;
using K = PathChange::Kind;
using Role = Breach::Role;

namespace {

PathChange change(K kind, std::string path, std::string old_path = {}) {
  PathChange c;
  c.kind = kind;
  c.path = std::move(path);
  c.old_path = std::move(old_path);
  return c;
}

const std::vector<std::string> kHarness = {"/tests/run.sh", "conftest.py",
                                           "/package.json#scripts.test", "/.github/workflows/"};
const std::vector<std::string> kTests = ProtectConfig::default_tests();

std::vector<Breach> breaches(const std::vector<PathChange>& changes,
                             const std::vector<std::string>& phase_files = {}) {
  return unowned_changes(changes, kHarness, kTests, phase_files);
}

}  // namespace

TEST(ProtectedPathsTest, PatternsFollowGitignoreAnchoringFoldersAndGlobs) {
  EXPECT_TRUE(path_matches("conftest.py", "conftest.py"));
  EXPECT_TRUE(path_matches("conftest.py", "tests/unit/conftest.py")) << "no slash: any depth";
  EXPECT_FALSE(path_matches("/conftest.py", "tests/conftest.py")) << "leading slash: the root";
  EXPECT_TRUE(path_matches("tests/run.sh", "tests/run.sh"));
  EXPECT_FALSE(path_matches("tests/run.sh", "sub/tests/run.sh")) << "a slash inside anchors";
  EXPECT_TRUE(path_matches("jest.config.*", "web/jest.config.ts"));
  EXPECT_FALSE(path_matches("jest.config.*", "jest.config")) << "the dot is literal";
  EXPECT_TRUE(path_matches(".vscode/", ".vscode/tasks.json"));
  EXPECT_TRUE(path_matches(".vscode/", "sub/.vscode/settings.json"));
  EXPECT_FALSE(path_matches(".vscode/", ".vscode")) << "a folder pattern wants a folder";
  EXPECT_TRUE(path_matches(".devcontainer", ".devcontainer/devcontainer.json"))
      << "a pattern covers what is under a folder it matches";
  EXPECT_TRUE(path_matches("/.github/workflows/", ".github/workflows/ci.yml"));
  EXPECT_FALSE(path_matches("/.github/workflows/", "docs/.github/workflows/ci.yml"));
  EXPECT_TRUE(path_matches("*_test.*", "src/a/parser_test.cpp"));
  EXPECT_TRUE(path_matches("src/**/fixtures/", "src/a/b/fixtures/x.json"));
  EXPECT_TRUE(path_matches("src/**/fixtures/", "src/fixtures/x.json")) << "** is zero or more";
  EXPECT_FALSE(path_matches("src/*.c", "src/a/b.c")) << "* stays in its segment";
  EXPECT_FALSE(path_matches("", "a"));
  EXPECT_FALSE(path_matches("/", "a"));
}

TEST(ProtectedPathsTest, AKeyedPatternMatchesOnlyItsKeyRecord) {
  EXPECT_TRUE(path_matches("/package.json#scripts.test", "package.json#scripts.test"));
  EXPECT_FALSE(path_matches("/package.json#scripts.test", "package.json"))
      << "a dependency change is not the test script";
  EXPECT_FALSE(path_matches("/package.json#scripts.test", "package.json#scripts.lint"));
  auto k = keyed_pattern("/package.json#scripts.test");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->file, "/package.json");
  EXPECT_EQ(k->key, "scripts.test");
  EXPECT_FALSE(keyed_pattern("tests/"));
  EXPECT_EQ(keyed_files({"a", "/package.json#scripts.test", "/package.json#scripts.pre"}),
            std::vector<std::string>{"/package.json"});
}

TEST(ProtectedPathsTest, JsonKeysAreComparedAsValues) {
  std::string a = R"({"scripts": {"test": "jest", "lint": "x"}})";
  EXPECT_FALSE(json_key_differs(a, R"({"scripts":{"lint":"y","test":"jest"}})", "scripts.test"))
      << "formatting and other keys do not count";
  EXPECT_TRUE(json_key_differs(a, R"({"scripts": {"test": "exit 0"}})", "scripts.test"));
  EXPECT_TRUE(json_key_differs(a, R"({"scripts": {}})", "scripts.test")) << "removed";
  EXPECT_TRUE(json_key_differs(std::nullopt, a, "scripts.test")) << "a new file with the key";
  EXPECT_FALSE(json_key_differs(std::nullopt, R"({"name": "x"})", "scripts.test"));
  EXPECT_TRUE(json_key_differs(a, "not json {", "scripts.test"));
  EXPECT_FALSE(json_key_differs(std::string("{bad"), std::string("{bad"), "scripts.test"));
}

TEST(ProtectedPathsTest, KeyedChangesAreAddedOnlyWhenTheKeyChanged) {
  PathChange deps = change(K::modified, "package.json");
  deps.before = R"({"scripts": {"test": "jest"}})";
  deps.after = R"({"dependencies": {"y": "1"}, "scripts": {"test": "jest"}})";
  std::vector<PathChange> changes = {deps};
  add_keyed_changes(changes, kHarness);
  EXPECT_EQ(changes.size(), 1u);
  changes[0].after = R"({"scripts": {"test": "exit 0"}})";
  add_keyed_changes(changes, kHarness);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].path, "package.json#scripts.test");
  EXPECT_EQ(breaches(changes).size(), 1u);
  EXPECT_TRUE(breaches(changes, {"package.json"}).empty()) << "a listed file owns its keys";
}

TEST(ProtectedPathsTest, AChangedHarnessFileIsABreachUnlessThePhaseListsIt) {
  auto b = breaches({change(K::modified, "tests/run.sh"), change(K::modified, "src/greet.c")});
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0], (Breach{"tests/run.sh", K::modified, Role::harness, "/tests/run.sh"}))
      << "the harness role wins over the tests/ folder";
  EXPECT_TRUE(breaches({change(K::modified, "tests/run.sh")}, {"tests/run.sh"}).empty());
  EXPECT_TRUE(breaches({change(K::modified, "tests/run.sh")}, {"tests/"}).empty())
      << "phase files are patterns too";
  // A new harness file counts: a conftest.py anywhere changes what pytest runs.
  b = breaches({change(K::added, "tests/unit/conftest.py")});
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].kind, K::added);
  EXPECT_EQ(b[0].role, Role::harness);
}

TEST(ProtectedPathsTest, ExistingTestsNeedTheirPhaseNewTestsAreFree) {
  auto b = breaches({change(K::modified, "tests/t_other.sh"), change(K::added, "tests/t_new.sh"),
                     change(K::modified, "src/parser_test.cpp")});
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].path, "tests/t_other.sh");
  EXPECT_EQ(b[0].role, Role::test);
  EXPECT_EQ(b[1].path, "src/parser_test.cpp");
  EXPECT_TRUE(breaches({change(K::modified, "tests/t_greet.sh")}, {"tests/t_greet.sh"}).empty())
      << "a phase that says it updates the test may";
}

TEST(ProtectedPathsTest, DeletingAProtectedFileIsABreach) {
  auto b = breaches({change(K::deleted, "tests/t_other.sh"), change(K::deleted, "tests/run.sh")});
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].kind, K::deleted);
  EXPECT_EQ(b[0].role, Role::test);
  EXPECT_EQ(b[1].role, Role::harness);
  EXPECT_NE(breach_feedback(b).find("`tests/t_other.sh` (deleted): restore it"), std::string::npos)
      << breach_feedback(b);
  EXPECT_TRUE(breaches({change(K::deleted, "tests/t_other.sh")}, {"tests/t_other.sh"}).empty());
}

TEST(ProtectedPathsTest, ARenameIsTheOldPathDeletedAndTheNewOneAdded) {
  // Moving a test away hides it from a runner that globs `t_*.sh`.
  auto b = breaches({change(K::renamed, "tests/disabled/t_other.sh.off", "tests/t_other.sh")});
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0], (Breach{"tests/t_other.sh", K::renamed, Role::test, "tests/"}));
  EXPECT_TRUE(
      breaches({change(K::renamed, "tests/t_new.sh", "tests/t_other.sh")}, {"tests/t_other.sh"})
          .empty());
  // Renaming something onto the harness adds a harness file.
  b = breaches({change(K::renamed, "tests/run.sh", "tests/run_new.sh")});
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1], (Breach{"tests/run.sh", K::added, Role::harness, "/tests/run.sh"}));
}

TEST(ProtectedPathsTest, AModeChangeIsAChange) {
  auto b = breaches({change(K::mode_changed, "tests/t_other.sh")});
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].kind, K::mode_changed);
  EXPECT_NE(breach_feedback(b).find("restore its mode"), std::string::npos);
  EXPECT_TRUE(breaches({change(K::mode_changed, "tests/t_other.sh")}, {"tests/t_other.sh"}).empty());
}

TEST(ProtectedPathsTest, TheFeedbackNamesEachFileAndWhyTheSummaryIsOneLine) {
  auto b = breaches({change(K::modified, "tests/run.sh"), change(K::modified, "tests/t_x.sh")});
  EXPECT_EQ(breach_summary(b),
            "changed the test harness: tests/run.sh; changed existing tests: tests/t_x.sh (not "
            "listed in its phase)");
  std::string f = breach_feedback(b);
  EXPECT_NE(f.find("- `tests/run.sh` (modified): restore it; it is the test harness "
                   "(protect.harness `/tests/run.sh`): it decides whether tests pass."),
            std::string::npos)
      << f;
  EXPECT_NE(f.find("`tests/t_x.sh` (modified): restore it; it is an existing test"),
            std::string::npos);
  EXPECT_NE(f.find("- Files:"), std::string::npos);
}

TEST(ProtectedPathsTest, HeldPathsAreLooprsOwnTheHarnessAndAutoRunFiles) {
  ProtectConfig p;
  auto held = held_paths({"src/a.c", ".loopr/config.yml", ".loopr/prompts/code.md",
                          ".loopr/plans/001-x.plan.md", "tests/run.sh", ".claude/settings.json",
                          ".vscode/tasks.json", ".envrc", ".devcontainer/devcontainer.json",
                          ".github/workflows/ci.yml", ".gitmodules", ".gitattributes",
                          ".husky/pre-commit", ".pre-commit-config.yaml", "tests/t_x.sh"},
                         kHarness, p.hold);
  using R = HeldPath::Role;
  ASSERT_EQ(held.size(), 12u);
  EXPECT_EQ(held[0], (HeldPath{".loopr/config.yml", R::loopr, {}}));
  EXPECT_EQ(held[1], (HeldPath{".loopr/prompts/code.md", R::loopr, {}}));
  EXPECT_EQ(held[2], (HeldPath{"tests/run.sh", R::harness, {}}));
  EXPECT_EQ(held[3], (HeldPath{".claude/settings.json", R::auto_run, {}}));
  EXPECT_EQ(held[7], (HeldPath{".github/workflows/ci.yml", R::harness, {}})) << "harness first";
  EXPECT_EQ(held[11], (HeldPath{".pre-commit-config.yaml", R::auto_run, {}}));
  EXPECT_TRUE(held_paths({".loopr/config.yml"}, {}, {}).size() == 1u)
      << "loopr's own files are held whatever the config says";
}

TEST(ProtectedPathsTest, TheDefaultHarnessComesFromTheTestCommand) {
  auto has = [](const std::vector<std::string>& v, const std::string& p) {
    return std::find(v.begin(), v.end(), p) != v.end();
  };
  auto sh = default_harness("sh tests/run.sh");
  EXPECT_EQ(sh.front(), "/tests/run.sh");
  EXPECT_TRUE(has(sh, "conftest.py") && has(sh, "/.github/workflows/"));
  EXPECT_EQ(default_harness("./check --fast").front(), "/check");
  EXPECT_EQ(default_harness("bash -c './ci/test.sh --fast' && echo ok").front(), "/ci/test.sh");
  EXPECT_EQ(default_harness("make test").front(), "/Makefile");
  EXPECT_EQ(default_harness("npm run test:unit").front(), "/package.json#scripts.test:unit");
  EXPECT_TRUE(has(default_harness("npm test"), "/package.json#scripts.test"));
  EXPECT_EQ(default_harness("python3 -m pytest -q tests/").front(), "pytest.ini")
      << "a folder argument is the tests, not the harness";
  EXPECT_EQ(default_harness("go test ./...").front(), "pytest.ini");
  EXPECT_TRUE(has(default_harness(""), "jest.config.*"));
}

TEST(ProtectedPathsTest, TheConfigReadsProtectAndReview) {
  Config d;
  EXPECT_FALSE(d.protect.harness);
  EXPECT_EQ(harness_patterns(d), default_harness("make test"));
  EXPECT_FALSE(d.review.enabled);
  auto c = parse_config(
      "loops:\n  code: {validation: \"sh t.sh\"}\n  review: {enabled: true, model: m, "
      "max_rounds: 3}\nprotect:\n  harness: [t.sh]\n  tests: []\n  hold: [\".x/\"]\n",
      "c.yml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(harness_patterns(*c), std::vector<std::string>{"t.sh"});
  EXPECT_TRUE(c->protect.tests.empty());
  EXPECT_EQ(c->protect.hold, std::vector<std::string>{".x/"});
  EXPECT_TRUE(c->review.enabled);
  EXPECT_EQ(c->review.model, "m");
  EXPECT_EQ(c->review.max_rounds, 3);
  auto none = parse_config("protect: {harness: []}\n", "c.yml");
  ASSERT_TRUE(none);
  EXPECT_TRUE(harness_patterns(*none).empty()) << "an empty list turns the inference off";
  auto bad = parse_config("protect:\n  hold: [\"../x\"]\n", "c.yml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("c.yml:2: protect.hold"), std::string::npos)
      << bad.error().message;
  EXPECT_FALSE(parse_config("loops:\n  review: {max_rounds: 0}\n", "c.yml"));
  EXPECT_FALSE(parse_config("protect: {secrets: []}\n", "c.yml"));
}

TEST(ProtectedPathsTest, TheWrittenDefaultFileHoldsTheInferredHarness) {
  auto c = parse_config(default_config_yaml("main", "sh tests/run.sh"), "default");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE(c->protect.harness);
  EXPECT_EQ(*c->protect.harness, default_harness("sh tests/run.sh"));
  EXPECT_EQ(c->protect.tests, ProtectConfig::default_tests());
  EXPECT_EQ(c->protect.hold, ProtectConfig::default_hold());
  EXPECT_FALSE(c->review.enabled);
  EXPECT_EQ(c->review.max_rounds, 2);
}
